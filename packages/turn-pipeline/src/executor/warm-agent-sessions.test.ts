import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSessionStore, type SqliteSessionStore } from "@agent-kernel/session-store";
import { fauxAssistantMessage } from "@earendil-works/pi-ai";
import type { AgentSession, SessionManager, ToolDefinition } from "@earendil-works/pi-coding-agent";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type HermeticRuntime, hermeticRuntime, weatherTool } from "../../test/session-manager/hermetic.ts";
import { openPiSessionManager } from "../session-manager/index.ts";
import { createHermeticSession } from "./hermetic-session.ts";
import { type AgentSessionShape, installRequestHook, WarmAgentSessions } from "./warm-agent-sessions.ts";

let root: string;
let runtime: HermeticRuntime;
let store: SqliteSessionStore;
let sessions = 0;

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "warm-agent-sessions-"));
  runtime = await hermeticRuntime();
  store = await openSessionStore({ stateDir: join(root, "state") });
});
afterEach(async () => {
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

/** A new session's pi manager, every write mirrored into SQLite. */
function newSessionManager(): SessionManager {
  sessions += 1;
  return openPiSessionManager(store, { agentId: "main", sessionId: `warm-${sessions}`, cwd: root })
    .sessionManager;
}

function shapeOf(overrides: Partial<AgentSessionShape> = {}): AgentSessionShape {
  return {
    modelRuntime: runtime.modelRuntime,
    model: runtime.faux.getModel(),
    thinkingLevel: "low",
    tools: [weatherTool as unknown as ToolDefinition],
    systemPrompt: "You are the warm-session test agent.",
    extraSystemPrompt: undefined,
    bootstrapFiles: [{ path: "/w/AGENTS.md", content: "Be brief." }],
    keepRecentTokens: 20_000,
    ...overrides,
  };
}

/** A real pi session over an in-memory manager, with `dispose` observed. */
async function session(
  sessionManager: SessionManager,
  shape: AgentSessionShape,
): Promise<{ session: AgentSession; disposed: () => boolean }> {
  const created = await createHermeticSession({ ...shape, cwd: root, sessionManager });
  let disposed = false;
  const dispose = created.dispose.bind(created);
  created.dispose = () => {
    disposed = true;
    dispose();
  };
  return { session: created, disposed: () => disposed };
}

describe("warm AgentSessions", () => {
  it("hands a kept session back for the same shape on an unmoved transcript, once", async () => {
    const warm = new WarmAgentSessions();
    const sessionManager = newSessionManager();
    const shape = shapeOf();
    const { session: kept } = await session(sessionManager, shape);
    warm.keep(sessionManager, { session: kept, shape, requestHook: installRequestHook(kept) });
    // Built again for the next turn: equal content, other objects.
    const again = shapeOf({ bootstrapFiles: [{ path: "/w/AGENTS.md", content: "Be brief." }] });
    expect(warm.take(sessionManager, again)?.session).toBe(kept);
    expect(warm.take(sessionManager, again)).toBeUndefined();
  });

  it.each([
    ["another system prompt", { systemPrompt: "Something else." }],
    ["another thinking level", { thinkingLevel: "high" as const }],
    ["other tools", { tools: [] }],
    ["other bootstrap files", { bootstrapFiles: [{ path: "/w/AGENTS.md", content: "Be verbose." }] }],
    ["another extra prompt", { extraSystemPrompt: "Answer in French." }],
  ])("disposes instead of handing back for %s", async (_what, change) => {
    const warm = new WarmAgentSessions();
    const sessionManager = newSessionManager();
    const shape = shapeOf();
    const { session: kept, disposed } = await session(sessionManager, shape);
    warm.keep(sessionManager, { session: kept, shape, requestHook: installRequestHook(kept) });
    expect(warm.take(sessionManager, shapeOf(change))).toBeUndefined();
    expect(disposed()).toBe(true);
  });

  it("disposes instead of handing back when the transcript moved since, and when dropped", async () => {
    const warm = new WarmAgentSessions();
    const sessionManager = newSessionManager();
    const shape = shapeOf();
    const first = await session(sessionManager, shape);
    warm.keep(sessionManager, {
      session: first.session,
      shape,
      requestHook: installRequestHook(first.session),
    });
    sessionManager.appendModelChange("faux", "faux-1");
    expect(warm.take(sessionManager, shape)).toBeUndefined();
    expect(first.disposed()).toBe(true);

    const second = await session(sessionManager, shape);
    warm.keep(sessionManager, {
      session: second.session,
      shape,
      requestHook: installRequestHook(second.session),
    });
    warm.drop(sessionManager);
    expect(second.disposed()).toBe(true);
    expect(warm.take(sessionManager, shape)).toBeUndefined();
  });

  it("runs the request hook before every model request, with what the session appended by then", async () => {
    const sessionManager = newSessionManager();
    const { session: created } = await session(sessionManager, shapeOf());
    const hook = installRequestHook(created);
    const seen: number[] = [];
    hook.beforeRequest = () => seen.push(sessionManager.getEntries().length);
    let requested = -1;
    runtime.faux.setResponses([
      () => {
        requested = seen.length;
        return fauxAssistantMessage("hello");
      },
    ]);
    await created.prompt("hi", { expandPromptTemplates: false });
    expect(requested).toBe(1);
    // The user message (and what pi records before it) was appended before the hook ran.
    expect(sessionManager.getEntries().at((seen[0] ?? 0) - 1)).toMatchObject({
      type: "message",
      message: { role: "user" },
    });
    created.dispose();
  });
});

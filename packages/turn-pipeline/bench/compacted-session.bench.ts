// Long sessions cost what their context costs (issue 24, item 2): a 10k-entry session whose latest compaction
// keeps 400 entries, against pi on the same entries, in the same run.
//
// First suite, the first read of a fresh process: pi opening the session's JSONL file
// (`SessionManager.open`) and building the model context, against the kernel opening the pi binding over
// the SQLite store with nothing of the session cached in this process (the read cache cleared before each
// iteration, as in a process that just started) and building the same context; a 400-entry session read by
// pi as a reference. Target: the kernel ≥ 10× faster than pi on the 10k-entry session. The store's record of
// the settings before the context start (session-store's transcript-context-start.ts) is made by the setup's
// first turn here, as a compaction's append makes it in a running gateway; every timed read is then a read
// of the compaction's tail only.
//
// Second suite, a warm text turn (`executeTurn`, faux provider, SQLite, warm binding and AgentSession as a
// gateway keeps them) on the compacted 10k-entry session against the same turn on a 400-entry session with
// no compaction (the baseline). Target: within 1.5× of it (≥ 0.67× baseline). Both sessions grow by the same
// entries each iteration.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineSuite } from "@agent-kernel/bench";
import { clearTranscriptCache, type TranscriptEntry } from "@agent-kernel/session-store";
import { fauxAssistantMessage, fauxProvider } from "@earendil-works/pi-ai";
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { executeTurn } from "../src/executor/index.ts";
import type { TurnContext } from "../src/executor/types.ts";
import { newTranscriptHeader, openPiSessionManager } from "../src/session-manager/index.ts";
import { createHarness, fauxConfig } from "../test/executor/harness.ts";

const ENTRIES = 10_000;
const KEPT = 400;

/** A conversation as pi writes it: alternating user and assistant messages of a few hundred bytes. */
function message(index: number) {
  const text = `message ${index}: ${"lorem ipsum dolor sit amet ".repeat(8)}`;
  return index % 2 === 0
    ? {
        role: "user" as const,
        content: [{ type: "text" as const, text }],
        timestamp: 1_767_225_600_000 + index,
      }
    : {
        role: "assistant" as const,
        content: [{ type: "text" as const, text }],
        api: "faux",
        provider: "faux",
        model: "faux-1",
        usage: {
          input: 10,
          output: 20,
          cacheRead: 0,
          cacheWrite: 0,
          totalTokens: 30,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
        },
        stopReason: "stop" as const,
        timestamp: 1_767_225_600_000 + index,
      };
}

/** pi writing a session of `count` messages (a model and thinking change first), compacted when asked. */
function piSession(dir: string, count: number, compactKeeping?: number): SessionManager {
  const manager = SessionManager.create("/work", dir);
  manager.appendModelChange("faux", "faux-1");
  manager.appendThinkingLevelChange("off");
  for (let index = 0; index < count; index++) manager.appendMessage(message(index));
  if (compactKeeping !== undefined) {
    const branch = manager.getBranch();
    const kept = branch[branch.length - compactKeeping]?.id ?? "";
    manager.appendCompaction("## Goal\nThe conversation so far, summarised.", kept, 50_000);
  }
  return manager;
}

const dir = mkdtempSync(join(tmpdir(), "bench-compacted-"));
process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
const compacted = piSession(join(dir, "pi-long"), ENTRIES, KEPT);
const short = piSession(join(dir, "pi-short"), KEPT);
const compactedFile = compacted.getSessionFile() ?? "";
const shortFile = short.getSessionFile() ?? "";

const faux = fauxProvider({
  provider: "faux",
  models: [{ id: "faux-1", reasoning: true, input: ["text"], contextWindow: 200_000, maxTokens: 8192 }],
});
const harness = await createHarness({ config: fauxConfig(), nativeProviders: [faux.provider] });

/** The same entries in the harness's SQLite store, under the session `key` resolves to. */
async function storedContext(key: string, from: SessionManager): Promise<TurnContext> {
  const context = await harness.context(key);
  const transcript = harness.store.openTranscript(context.agentId, context.sessionId, {
    header: newTranscriptHeader(context.sessionId, context.workspaceDir),
  });
  transcript.appendMany(from.getEntries() as unknown as TranscriptEntry[]);
  await harness.store.flush();
  return context;
}

const longContext = await storedContext("agent:main:bench-compacted-long", compacted);
const shortContext = await storedContext("agent:main:bench-compacted-short", short);
const target = (context: TurnContext) => ({
  agentId: context.agentId,
  sessionId: context.sessionId,
  cwd: context.workspaceDir,
});

const reply = () => faux.setResponses([fauxAssistantMessage("Hello there, how can I help?")]);
async function kernelTurn(context: TurnContext): Promise<void> {
  reply();
  const result = await executeTurn(context, { prompt: "Say hello", timeoutMs: 60_000, entryPoint: "agent" });
  if (result.status !== "ok") throw new Error(`bench turn failed: ${result.errorMessage}`);
}
// The first turn of each session warms the executor's binding and AgentSession (as a gateway's first turn).
await kernelTurn(longContext);
await kernelTurn(shortContext);

// The kernel's context must be pi's: checked once, before anything is timed.
clearTranscriptCache();
const check = openPiSessionManager(harness.store, target(longContext)).sessionManager.buildSessionContext();
const piCheck = SessionManager.open(compactedFile).buildSessionContext();
if (check.messages.length < KEPT || check.messages[0]?.role !== piCheck.messages[0]?.role)
  throw new Error("the kernel's context of the compacted session is not pi's");

const PI_OPEN = `pi SessionManager.open + buildSessionContext, ${ENTRIES}-entry session compacted keeping ${KEPT}`;
const WARM_SHORT = `executeTurn, warm, ${KEPT}-entry session (no compaction)`;

export default [
  defineSuite({
    name: `first read of a ${ENTRIES}-entry session whose compaction keeps ${KEPT} entries`,
    baseline: PI_OPEN,
    iterations: 30,
    warmup: 3,
    cases: [
      { name: PI_OPEN, run: () => void SessionManager.open(compactedFile).buildSessionContext() },
      {
        name: `reference: pi SessionManager.open + buildSessionContext, ${KEPT}-entry session`,
        run: () => void SessionManager.open(shortFile).buildSessionContext(),
      },
      {
        name: "kernel: openPiSessionManager + buildSessionContext, nothing cached in the process (SQLite)",
        before: () => clearTranscriptCache(),
        run: () =>
          void openPiSessionManager(harness.store, target(longContext)).sessionManager.buildSessionContext(),
      },
      {
        name: "kernel: the same, then getBranch().some(…) as pi's createAgentSession does",
        before: () => clearTranscriptCache(),
        run: () => {
          const manager = openPiSessionManager(harness.store, target(longContext)).sessionManager;
          manager.buildSessionContext();
          manager.getBranch().some((entry) => entry.type === "thinking_level_change");
        },
      },
    ],
  }),
  defineSuite({
    name: `warm text turn on a ${ENTRIES}-entry session compacted keeping ${KEPT} (faux)`,
    baseline: WARM_SHORT,
    iterations: 100,
    warmup: 10,
    cases: [
      { name: WARM_SHORT, run: () => kernelTurn(shortContext) },
      {
        name: `executeTurn, warm, ${ENTRIES}-entry session compacted keeping ${KEPT}`,
        run: () => kernelTurn(longContext),
      },
    ],
  }),
];

// The tools of issue 23 called by a model: pi for real, the turn through `executeTurn`, pi's faux provider
// answering with tool calls and reading what came back. Each tool: it works, its config gate, its policy
// denial and its limits.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import {
  type Context,
  type FauxProviderHandle,
  fauxAssistantMessage,
  fauxProvider,
  fauxToolCall,
} from "@earendil-works/pi-ai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { executeTurn, killAllBackgroundProcesses } from "../../src/executor/index.ts";
import { createHarness, fauxConfig, type Harness } from "./harness.ts";

let faux: FauxProviderHandle;
const harnesses: Harness[] = [];

function newFaux(): FauxProviderHandle {
  faux = fauxProvider({
    provider: "faux",
    models: [{ id: "faux-1", reasoning: true, input: ["text"], contextWindow: 200_000, maxTokens: 8192 }],
    tokenSize: { min: 4, max: 4 },
  });
  return faux;
}

async function harnessWith(extra: Record<string, unknown>): Promise<Harness> {
  const harness = await createHarness({ config: fauxConfig(extra), nativeProviders: [newFaux().provider] });
  harnesses.push(harness);
  return harness;
}
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close();
});

/** The tools offered and the tool results the model saw on one request. */
interface Seen {
  tools: string[];
  results: { toolName: string; isError: boolean; text: string }[];
}

function seenIn(ctx: Context): Seen {
  return {
    // pi announces the tools in its system messages (`toolsAdded`).
    tools: ctx.messages.flatMap((message) =>
      message.role === "system" ? (message.toolsAdded ?? []).map((tool) => tool.name) : [],
    ),
    results: ctx.messages.flatMap((message) =>
      message.role === "toolResult"
        ? [
            {
              toolName: message.toolName,
              isError: message.isError,
              text: message.content.map((block) => (block.type === "text" ? block.text : "")).join(""),
            },
          ]
        : [],
    ),
  };
}

/** One turn where the model calls `tool` with `args` once, then answers; what it saw on each request. */
async function callOnce(harness: Harness, sessionKey: string, tool: string, args: Record<string, unknown>) {
  const requests: Seen[] = [];
  faux.setResponses([
    (ctx) => {
      requests.push(seenIn(ctx));
      return fauxAssistantMessage([fauxToolCall(tool, args as never, { id: "t1" })], {
        stopReason: "toolUse",
      });
    },
    (ctx) => {
      requests.push(seenIn(ctx));
      return fauxAssistantMessage("done");
    },
  ]);
  const context = await harness.context(sessionKey);
  const result = await executeTurn(context, { prompt: "go", timeoutMs: 60_000, entryPoint: "agent" });
  expect(result.status).toBe("ok");
  return { requests, result, lastResult: requests.at(-1)?.results.at(-1) };
}

describe("web_fetch called by a model", () => {
  let server: Server;
  let port: number;
  let hits = 0;
  beforeAll(async () => {
    server = createServer((_request, response) => {
      hits++;
      response
        .writeHead(200, { "Content-Type": "text/html" })
        .end(
          "<html><head><title>Status page</title></head><body><main><p>All systems green.</p></main></body></html>",
        );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("returns the page's text where the config allows the loopback server", async () => {
    const harness = await harnessWith({
      tools: { profile: "full", web: { fetch: { ssrfPolicy: { allowedHostnames: ["127.0.0.1"] } } } },
    });
    const { requests, lastResult } = await callOnce(harness, "agent:main:wf1", "web_fetch", {
      url: `http://127.0.0.1:${port}/status`,
    });
    expect(requests[0]?.tools).toContain("web_fetch");
    expect(lastResult).toMatchObject({ toolName: "web_fetch", isError: false });
    expect(lastResult?.text).toContain("Title: Status page");
    expect(lastResult?.text).toContain("All systems green.");
  });

  it("refuses the loopback server under the default config: an error result, no request made", async () => {
    const harness = await harnessWith({});
    const before = hits;
    const { lastResult } = await callOnce(harness, "agent:main:wf2", "web_fetch", {
      url: `http://127.0.0.1:${port}/status`,
    });
    expect(lastResult).toMatchObject({ toolName: "web_fetch", isError: true });
    expect(lastResult?.text).toMatch(/refused to fetch .*127\.0\.0\.1 is a loopback address/);
    expect(hits).toBe(before);
  });

  it("is not offered when tools.web.fetch.enabled is false or the policy denies it; a call anyway fails", async () => {
    for (const tools of [
      { profile: "full", web: { fetch: { enabled: false } } },
      { profile: "full", deny: ["group:web"] },
    ]) {
      const harness = await harnessWith({ tools });
      const before = hits;
      const { requests, lastResult } = await callOnce(harness, "agent:main:wf3", "web_fetch", {
        url: `http://127.0.0.1:${port}/status`,
      });
      expect(requests[0]?.tools).not.toContain("web_fetch");
      expect(requests[0]?.tools).toContain("read");
      expect(lastResult?.isError).toBe(true);
      expect(hits).toBe(before);
    }
  });
});

describe("apply_patch called by a model", () => {
  const PATCH = [
    "*** Begin Patch",
    "*** Update File: notes.txt",
    "@@",
    "-draft",
    "+final",
    "*** Add File: added.txt",
    "+new file",
    "*** End Patch",
  ].join("\n");

  it("patches the workspace", async () => {
    const harness = await harnessWith({});
    writeFileSync(join(harness.workspaceDir, "notes.txt"), "draft\n");
    const { requests, lastResult } = await callOnce(harness, "agent:main:ap1", "apply_patch", {
      input: PATCH,
    });
    expect(requests[0]?.tools).toContain("apply_patch");
    expect(lastResult).toMatchObject({ toolName: "apply_patch", isError: false });
    expect(lastResult?.text).toBe(
      `Success. Updated the following files:\nA ${harness.workspaceDir}/added.txt\nM ${harness.workspaceDir}/notes.txt`,
    );
    expect(readFileSync(join(harness.workspaceDir, "notes.txt"), "utf8")).toBe("final\n");
  });

  it("a chunk that does not match is an error result and changes nothing", async () => {
    const harness = await harnessWith({});
    writeFileSync(join(harness.workspaceDir, "notes.txt"), "something else\n");
    const { lastResult } = await callOnce(harness, "agent:main:ap2", "apply_patch", { input: PATCH });
    expect(lastResult).toMatchObject({ toolName: "apply_patch", isError: true });
    expect(lastResult?.text).toMatch(/could not find these lines in .*notes\.txt:\ndraft/);
    expect(existsSync(join(harness.workspaceDir, "added.txt"))).toBe(false);
  });

  it("is not offered when tools.exec.applyPatch is off, leaves out the model, or the policy denies it", async () => {
    for (const tools of [
      { profile: "full", exec: { applyPatch: { enabled: false } } },
      { profile: "full", exec: { applyPatch: { allowModels: ["openai/gpt-5.4"] } } },
      { profile: "full", deny: ["apply_patch"] },
    ]) {
      const harness = await harnessWith({ tools });
      writeFileSync(join(harness.workspaceDir, "notes.txt"), "draft\n");
      const { requests, lastResult } = await callOnce(harness, "agent:main:ap3", "apply_patch", {
        input: PATCH,
      });
      expect(requests[0]?.tools).not.toContain("apply_patch");
      expect(lastResult?.isError).toBe(true);
      expect(readFileSync(join(harness.workspaceDir, "notes.txt"), "utf8")).toBe("draft\n");
    }
    // allowModels naming this model (any case, with or without its provider) offers it.
    const harness = await harnessWith({
      tools: { profile: "full", exec: { applyPatch: { allowModels: ["FAUX/faux-1"] } } },
    });
    writeFileSync(join(harness.workspaceDir, "notes.txt"), "draft\n");
    const { lastResult } = await callOnce(harness, "agent:main:ap4", "apply_patch", { input: PATCH });
    expect(lastResult?.isError).toBe(false);
  });
});

describe("exec in the background and process, called by a model", () => {
  afterEach(() => {
    killAllBackgroundProcesses("test over");
  });

  it("a command that outlives yieldMs returns a sessionId; the next call polls it and kills it", async () => {
    const harness = await harnessWith({});
    const requests: Seen[] = [];
    let sessionId = "";
    faux.setResponses([
      (ctx) => {
        requests.push(seenIn(ctx));
        return fauxAssistantMessage(
          [fauxToolCall("exec", { command: "echo started; sleep 30", yieldMs: 300 }, { id: "e1" })],
          { stopReason: "toolUse" },
        );
      },
      (ctx) => {
        requests.push(seenIn(ctx));
        sessionId = /sessionId (proc_\w+)/.exec(requests.at(-1)?.results.at(-1)?.text ?? "")?.[1] ?? "";
        return fauxAssistantMessage([fauxToolCall("process", { action: "kill", sessionId }, { id: "p1" })], {
          stopReason: "toolUse",
        });
      },
      (ctx) => {
        requests.push(seenIn(ctx));
        return fauxAssistantMessage([fauxToolCall("process", { action: "log", sessionId }, { id: "p2" })], {
          stopReason: "toolUse",
        });
      },
      (ctx) => {
        requests.push(seenIn(ctx));
        return fauxAssistantMessage("stopped it");
      },
    ]);
    const context = await harness.context("agent:main:bg1");
    const result = await executeTurn(context, { prompt: "run it", timeoutMs: 60_000, entryPoint: "agent" });
    expect(result.status).toBe("ok");
    expect(requests[0]?.tools).toEqual(expect.arrayContaining(["exec", "process"]));
    expect(requests[1]?.results.at(-1)).toMatchObject({ toolName: "exec", isError: false });
    expect(sessionId).toMatch(/^proc_/);
    expect(requests[2]?.results.at(-1)?.text).toBe(
      `Process ${sessionId} was killed (killed by the process tool).`,
    );
    expect(requests[3]?.results.at(-1)?.text).toContain("started");
  });

  it("the policy can deny process: exec then runs in the foreground, ignoring background", async () => {
    const harness = await harnessWith({ tools: { profile: "full", deny: ["process"] } });
    const { requests, lastResult } = await callOnce(harness, "agent:main:bg2", "exec", {
      command: "echo foreground",
      background: true,
    });
    expect(requests[0]?.tools).toContain("exec");
    expect(requests[0]?.tools).not.toContain("process");
    expect(lastResult).toMatchObject({ toolName: "exec", isError: false, text: "foreground\n" });
  });

  it("tools.exec.maxBackgroundProcesses bounds a session's running commands", async () => {
    const harness = await harnessWith({ tools: { profile: "full", exec: { maxBackgroundProcesses: 1 } } });
    await callOnce(harness, "agent:main:bg3", "exec", { command: "sleep 30", background: true });
    const { lastResult } = await callOnce(harness, "agent:main:bg3", "exec", {
      command: "sleep 30",
      background: true,
    });
    expect(lastResult).toMatchObject({ toolName: "exec", isError: true });
    expect(lastResult?.text).toMatch(/already runs 1 background processes \(the limit\)/);
  });
});

describe("the new tools in a sandboxed session", () => {
  afterEach(() => {
    killAllBackgroundProcesses("test over");
  });

  it("apply_patch writes inside the sandbox; a background exec runs there; the sandbox policy decides web_fetch", async () => {
    const harness = await harnessWith({
      agents: { defaults: { model: "faux/faux-1", sandbox: { mode: "all", scope: "session" } } },
    });
    const requests: Seen[] = [];
    let sessionId = "";
    faux.setResponses([
      (ctx) => {
        requests.push(seenIn(ctx));
        return fauxAssistantMessage(
          [
            fauxToolCall(
              "apply_patch",
              { input: "*** Begin Patch\n*** Add File: made.txt\n+inside\n*** End Patch" },
              { id: "a1" },
            ),
          ],
          { stopReason: "toolUse" },
        );
      },
      (ctx) => {
        requests.push(seenIn(ctx));
        return fauxAssistantMessage(
          [fauxToolCall("exec", { command: "pwd; cat made.txt; sleep 30", yieldMs: 500 }, { id: "e1" })],
          { stopReason: "toolUse" },
        );
      },
      (ctx) => {
        requests.push(seenIn(ctx));
        sessionId = /sessionId (proc_\w+)/.exec(requests.at(-1)?.results.at(-1)?.text ?? "")?.[1] ?? "";
        return fauxAssistantMessage(
          [fauxToolCall("process", { action: "poll", sessionId, timeout: 5000 }, { id: "p1" })],
          { stopReason: "toolUse" },
        );
      },
      (ctx) => {
        requests.push(seenIn(ctx));
        return fauxAssistantMessage("done");
      },
    ]);
    const context = await harness.context("agent:main:sandboxed");
    expect(context.runtime.sandbox.sandboxed).toBe(true);
    const result = await executeTurn(context, { prompt: "go", timeoutMs: 60_000, entryPoint: "agent" });
    expect(result.status).toBe("ok");
    expect(requests[1]?.results.at(-1)).toMatchObject({
      toolName: "apply_patch",
      isError: false,
      text: "Success. Updated the following files:\nA /workspace/made.txt",
    });
    // Not in the agent's own workspace: the sandbox has its own.
    expect(existsSync(join(harness.workspaceDir, "made.txt"))).toBe(false);
    expect(sessionId).toMatch(/^proc_/);
    const polled = [requests[2]?.results.at(-1)?.text ?? "", requests[3]?.results.at(-1)?.text ?? ""].join(
      "\n",
    );
    expect(polled).toContain("/workspace");
    expect(polled).toContain("inside");
    // web_fetch is offered in a sandboxed session exactly when the sandbox tool policy allows it.
    expect(requests[0]?.tools.includes("web_fetch")).toBe(context.toolPolicy.isAllowed("web_fetch"));
  });
});

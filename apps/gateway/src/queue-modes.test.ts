// The gateway's follow-up queue for the two modes the e2e test does not drive: `interrupt` (a new message
// aborts the running turn and runs instead of it) and `collect` (messages sent while a turn runs become one
// merged follow-up turn); and an item another process stored while the daemon runs (as `followup enqueue`
// does) is picked up and answered through its channel. The daemon in-process (runGatewayDaemon) over a real store, the web chat channel's
// HTTP API on loopback and tooling/fake-llm; the follow-up turns' replies go back through the channel.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type KernelConfig, parseConfig } from "@agent-kernel/config";
import { type RecordedRequest, reply, startFakeLlm } from "@agent-kernel/fake-llm";
import { describe, expect, it } from "vitest";
import { runGatewayDaemon } from "./daemon.ts";
import { openGatewayLog } from "./log-files.ts";

function userTexts(request: RecordedRequest | undefined): string[] {
  const body = request?.body as { messages?: { role: string; content: unknown }[] } | undefined;
  return (body?.messages ?? [])
    .filter((message) => message.role === "user")
    .map((message) =>
      typeof message.content === "string"
        ? message.content
        : (message.content as { type: string; text?: string }[]).map((part) => part.text ?? "").join(""),
    );
}

async function until(what: string, check: () => boolean, context: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${context()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function withGateway(
  mode: "interrupt" | "collect" | "followup",
  script: (request: RecordedRequest) => Promise<ReturnType<typeof reply> | { type: "stall" }>,
  body: (tools: {
    post: (text: string) => Promise<number>;
    requests: () => readonly RecordedRequest[];
    output: () => string;
    config: KernelConfig;
    stateDir: string;
  }) => Promise<void>,
): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), `gateway-${mode}-`));
  const workspace = join(root, "workspace");
  mkdirSync(workspace);
  const llm = await startFakeLlm();
  llm.setScenario({ fallback: script });
  const stateDir = join(root, "state");
  const config = parseConfig(
    {
      store: { stateDir },
      models: {
        providers: {
          scripted: {
            baseUrl: llm.baseUrlFor("openai"),
            api: "openai-completions",
            apiKey: "sk-test-key",
            models: [{ id: "m1", contextWindow: 32_000, maxTokens: 4096 }],
          },
        },
      },
      agents: { defaults: { model: "scripted/m1", workspace } },
      messages: { queue: { mode, debounceMs: 0 } },
      channels: { webchat: { port: 0, token: "modes" } },
    },
    { env: {} },
  );
  let output = "";
  const log = await openGatewayLog({ stateDir, stderr: { write: (text: string) => (output += text) } });
  const controller = new AbortController();
  const daemon = runGatewayDaemon({
    config,
    stateDir,
    log,
    signal: controller.signal,
    shutdownGraceMs: 500,
    queuePollMs: 200,
  });
  try {
    await until(
      "the gateway",
      () => output.includes("gateway running"),
      () => output,
    );
    const base = /web chat: (http:\/\/[^/]+)\//.exec(output)?.[1] ?? "";
    const post = async (text: string) =>
      (
        await fetch(`${base}/api/messages`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: "Bearer modes" },
          body: JSON.stringify({ conversationId: "conv1", text }),
        })
      ).status;
    await body({ post, requests: () => llm.requests, output: () => output, config, stateDir });
  } finally {
    controller.abort("SIGTERM");
    expect(await daemon).toBe(143);
    await log.close();
    await llm.close();
    rmSync(root, { recursive: true, force: true });
  }
}

describe.concurrent("the gateway's follow-up queue modes", () => {
  it("interrupt: a new message aborts the running turn and is answered instead", async () => {
    await withGateway(
      "interrupt",
      async (request) => {
        const last = userTexts(request).at(-1) ?? "";
        return last.includes("never mind") ? reply("INTERRUPTED-ANSWER") : { type: "stall" };
      },
      async ({ post, requests, output }) => {
        expect(await post("write me a long essay")).toBe(202);
        await until("the first turn's model call", () => requests().length >= 1, output);
        expect(await post("never mind, just say hi")).toBe(202);
        await until(
          "the interrupting follow-up turn's answer",
          () =>
            /follow-up turn webchat:conv1 session \S+ run \S+: ok, 1 item\(s\), 1 message\(s\) sent/.test(
              output(),
            ),
          output,
        );
        expect(output()).toMatch(
          /queued webchat:conv1 message \S+ for busy session \S+ \[interrupt\]: queued/,
        );
        // the essay's turn was aborted, not answered
        expect(output()).toMatch(/turn webchat:conv1 session \S+ run \S+: aborted/);
        expect(
          requests().filter((request) => userTexts(request).at(-1)?.includes("never mind")),
        ).toHaveLength(1);
      },
    );
  }, 120_000);

  it("collect: messages sent while a turn runs become one merged follow-up turn", async () => {
    let release = () => {};
    const first = new Promise<void>((resolve) => (release = resolve));
    await withGateway(
      "collect",
      async (request) => {
        const last = userTexts(request).at(-1) ?? "";
        if (last.includes("first question")) {
          await first;
          return reply("first answer");
        }
        return reply("COLLECTED-ANSWER");
      },
      async ({ post, requests, output }) => {
        expect(await post("first question")).toBe(202);
        await until("the first turn's model call", () => requests().length >= 1, output);
        expect(await post("also this")).toBe(202);
        expect(await post("and that")).toBe(202);
        await until(
          "both to be queued",
          () => (output().match(/\[collect\]: queued/g) ?? []).length === 2,
          output,
        );
        release();
        await until(
          "the merged follow-up turn",
          () =>
            /follow-up turn webchat:conv1 session \S+ run \S+: ok, 2 item\(s\), 1 message\(s\) sent/.test(
              output(),
            ),
          output,
        );
        const merged = requests().find((request) => userTexts(request).at(-1)?.includes("also this"));
        expect(userTexts(merged).at(-1)).toContain("and that");
        expect(requests()).toHaveLength(2);
      },
    );
  }, 120_000);

  it("runs an item another process stored in the queue while it runs, replying through its channel", async () => {
    await withGateway(
      "followup",
      async () => reply("FROM-ANOTHER-PROCESS"),
      async ({ output, config, stateDir }) => {
        // a second runner on the same state dir, as `followup enqueue` is: it only stores the item
        const { createFollowupRunner } = await import("@agent-kernel/followup");
        const other = await createFollowupRunner({ config, stateDir });
        await other.accept({
          id: "from-elsewhere",
          text: "queued from elsewhere",
          messageContext: { channel: "webchat", accountId: "default", chatType: "direct", to: "conv1" },
        });
        await other.stop();
        await until(
          "the gateway to run it",
          () =>
            /follow-up turn webchat:conv1 session \S+ run \S+: ok, 1 item\(s\), 1 message\(s\) sent/.test(
              output(),
            ),
          output,
        );
      },
    );
  }, 120_000);
});

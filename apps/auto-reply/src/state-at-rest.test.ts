// The gateway's state dir at rest, end to end: after real turns through a TestChannel and a shutdown that keeps
// a queued message, nothing under the state dir (the store's databases and their -wal/-shm, append journals,
// the inbox and the message it kept) gives group or others any access. The gateway logs to stderr (no log
// file) and keeps channel state and pairing in the store's kernel.sqlite, so these are all its files.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { reply } from "@agent-kernel/fake-llm";
import { describe, expect, it } from "vitest";
import { createGatewayHarness } from "../test/gateway-harness.ts";

function walk(dir: string): string[] {
  const found = [dir];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    found.push(...(entry.isDirectory() ? walk(path) : [path]));
  }
  return found;
}

/** Every path under `dir` with group or other bits, with its mode (empty when all are owner-only). */
function shared(dir: string): Record<string, string> {
  return Object.fromEntries(
    walk(dir)
      .map((path) => [path, statSync(path).mode & 0o777] as const)
      .filter(([, mode]) => (mode & 0o077) !== 0)
      .map(([path, mode]) => [path, `0${mode.toString(8)}`]),
  );
}

describe("the gateway's state dir", () => {
  it("holds only owner-only folders and files while running and after a stop that keeps a message", async ({
    onTestFinished,
  }) => {
    const h = await createGatewayHarness(
      { channels: { test: { dmPolicy: "open", allowFrom: ["*"] } } },
      { shutdownGraceMs: 50 },
    );
    onTestFinished(() => h.close());
    h.llm.enqueue(reply("Hello there."));
    await h.channel.receive({ text: "my key is sk-live-0123456789" });
    await h.gateway.idle();
    expect(h.turns[0]?.outcome?.status).toBe("ok");
    const running = walk(h.stateDir);
    expect(running).toEqual(
      expect.arrayContaining([
        join(h.stateDir, "state", "kernel.sqlite"),
        join(h.stateDir, "state", "kernel.sqlite-wal"),
        join(h.stateDir, "agents", "main", "agent.sqlite"),
        join(h.stateDir, "auto-reply", "inbox"),
      ]),
    );
    expect(shared(h.stateDir)).toEqual({});

    h.llm.enqueue({ type: "stall", afterDeltas: 1 });
    await h.channel.receive({ text: "stalls" });
    await h.channel.receive({ text: "queued behind it" });
    while (h.llm.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    await h.gateway.stop();
    expect(readdirSync(join(h.stateDir, "auto-reply", "inbox"))).toHaveLength(1);
    expect(shared(h.stateDir)).toEqual({});
  });
});

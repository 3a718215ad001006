// The `followup` command as a subprocess (`node --conditions=@agent-kernel/source src/main.ts`, the shipped
// entry with workspace packages from source) against fake-llm: enqueue, list, run, and usage errors.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { reply } from "@agent-kernel/fake-llm";
import { describe, expect, it } from "vitest";
import { APP_DIR, createHarness, lastUserText } from "../test/harness.ts";
import { EXIT } from "./index.ts";

function followup(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string | undefined> = { ...process.env, NODE_OPTIONS: "" };
    delete env.AGENT_KERNEL_CONFIG;
    delete env.AGENT_KERNEL_STATE_DIR;
    const child = spawn(
      process.execPath,
      ["--conditions=@agent-kernel/source", join(APP_DIR, "src", "main.ts"), ...args],
      { cwd: APP_DIR, env, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("followup command", () => {
  it("enqueue stores messages, list shows them, run handles them through the kernel", async ({
    onTestFinished,
  }) => {
    const h = await createHarness({ mode: "collect", debounceMs: 0 });
    onTestFinished(() => h.close());
    const common = ["--config", h.configPath, "--state-dir", h.stateDir];

    // The first message from the programmatic entry on the same state dir (every CLI enqueue loads pi).
    const runner = await h.runner();
    await runner.accept({ id: "q1", sessionKey: "work", text: "first" });
    await runner.stop();
    const second = await followup([
      "enqueue",
      "-m",
      "second",
      "--session",
      "work",
      "--sender",
      "ann",
      "--json",
      ...common,
    ]);
    expect(second.stderr).toBe("");
    expect(JSON.parse(second.stdout)).toMatchObject({
      status: "queued",
      busy: false,
      sessionKey: "agent:main:work",
      settings: { mode: "collect", cap: 20, dropPolicy: "summarize", debounceMs: 0 },
    });

    const listed = await followup(["list", "--json", "--status", "pending", ...common]);
    expect(
      (JSON.parse(listed.stdout) as { payload: { text: string } }[]).map((item) => item.payload.text),
    ).toEqual(["first", "second"]);

    h.llm.enqueue(reply("both handled"));
    const ran = await followup(["run", ...common]);
    expect(ran.stderr).toBe("");
    expect(ran.code).toBe(EXIT.ok);
    expect(ran.stdout).toBe("[agent:main:work] ok: both handled\n1 turn(s), 2 item(s) handled\n");
    expect(lastUserText(h.llm.requests[0])).toBe(
      "[Queued messages while agent was busy]\n\n---\nQueued #1\nfirst\n\n---\nQueued #2 (from ann)\nsecond",
    );
    const after = await followup(["list", ...common]);
    expect(after.stdout).toMatch(/^q1 {2}done {2}agent:main:work {2}followup\.message {2}"first"\n/);
  });

  it("bad flags and bad input exit 2 with one line naming the problem; nothing is stored", async ({
    onTestFinished,
  }) => {
    const h = await createHarness();
    onTestFinished(() => h.close());
    const common = ["--config", h.configPath, "--state-dir", h.stateDir];
    const noMessage = await followup(["enqueue", ...common]);
    expect([noMessage.code, noMessage.stderr]).toEqual([
      EXIT.usage,
      "followup: enqueue needs the message: -m <text>\n",
    ]);
    const badMode = await followup(["enqueue", "-m", "x", "--mode", "sometimes", ...common]);
    expect(badMode.code).toBe(EXIT.usage);
    expect(badMode.stderr).toMatch(
      /^followup: queueMode: expected one of steer, followup, collect, interrupt/,
    );
    const unknown = await followup(["frobnicate", ...common]);
    expect([unknown.code, unknown.stderr]).toEqual([
      EXIT.usage,
      'followup: unknown command "frobnicate" (expected enqueue, run or list)\n',
    ]);
    const badFlag = await followup(["list", "--bogus"]);
    expect(badFlag.code).toBe(EXIT.usage);
    expect(badFlag.stderr).toMatch(/^followup: Unknown option '--bogus'/);
    const listed = await followup(["list", ...common]);
    expect(listed.stdout).toBe("no queued messages\n");
  });
});

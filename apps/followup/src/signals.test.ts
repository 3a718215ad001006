// `followup run` stopped by a signal: the running turn is aborted, its claimed item goes back to pending at
// once (not `claimed` for the 15-minute lease), the exit code is 130 for Ctrl-C and 143 for SIGTERM, and the
// next `run` answers the item (its aborted run is not taken for its answer). Real subprocesses against
// tooling/fake-llm.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { reply } from "@agent-kernel/fake-llm";
import { describe, expect, it } from "vitest";
import { APP_DIR, createHarness } from "../test/harness.ts";

function startFollowup(args: readonly string[]) {
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
  const output = () => `${stdout}${stderr}`;
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once("close", (code) => resolve({ code, stdout, stderr })),
  );
  return { child, exited, output };
}

async function until(what: string, check: () => boolean, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; output: ${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.concurrent("followup run and signals", () => {
  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    it(`${signal} aborts the turn, releases the claimed item and exits ${code}`, async ({
      onTestFinished,
    }) => {
      const h = await createHarness({ mode: "followup", debounceMs: 0 });
      onTestFinished(() => h.close());
      const common = ["--config", h.configPath, "--state-dir", h.stateDir];
      const runner = await h.runner();
      await runner.accept({ id: "slow-1", sessionKey: "work", text: "take your time" });
      await runner.stop();

      h.llm.enqueue({ type: "stall" });
      const run = startFollowup(["run", ...common]);
      onTestFinished(() => void run.child.kill("SIGKILL"));
      await until("the model call", () => h.llm.requests.length >= 1, run.output);
      run.child.kill(signal);
      const stopped = await run.exited;
      expect(stopped.code, stopped.stderr).toBe(code);
      expect(stopped.stderr).toContain("released 1 claimed item(s) of agent:main:work back to pending");

      const listed = startFollowup(["list", "--json", ...common]);
      const items = JSON.parse((await listed.exited).stdout) as { itemId: string; status: string }[];
      expect(items).toEqual([expect.objectContaining({ itemId: "slow-1", status: "pending" })]);

      h.llm.enqueue(reply("answered after all"));
      const again = await startFollowup(["run", ...common]).exited;
      expect(again.code).toBe(0);
      expect(again.stdout).toContain("[agent:main:work] ok: answered after all");
    }, 120_000);
  }
});

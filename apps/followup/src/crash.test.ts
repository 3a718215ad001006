// Crash safety with a real child process killed by SIGKILL: a message accepted (durable) but not yet run is
// handled after a restart, exactly once; and a message whose turn ended just before the crash (the queue
// item not yet completed) is not run again. Checked in the run records, the transcript and the model's
// requests.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { reply } from "@agent-kernel/fake-llm";
import { describe, expect, it, type OnTestFinishedHandler } from "vitest";
import { APP_DIR, createHarness, recordEvents, sessionView } from "../test/harness.ts";
import { ManualClock } from "./index.ts";

const LEASE_MS = 15 * 60_000;

async function harness(onTestFinished: (fn: OnTestFinishedHandler) => void) {
  const h = await createHarness({ mode: "followup", debounceMs: 0 });
  onTestFinished(() => h.close());
  return h;
}

/** Starts the crash child; resolves with it once `ready` matches its stdout (or it exits). */
function startChild(configPath: string, scenario: string) {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--conditions=@agent-kernel/source", join(APP_DIR, "test", "crash-child.ts"), configPath, scenario],
    { cwd: APP_DIR, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NODE_OPTIONS: "" } },
  );
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    exited,
    output: () => ({ stdout, stderr }),
    async waitFor(pattern: RegExp): Promise<string> {
      for (;;) {
        const match = stdout.match(pattern);
        if (match) return match[0];
        if (child.exitCode !== null || child.signalCode !== null) {
          throw new Error(`the child exited before printing ${pattern}:\n${stdout}\n${stderr}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
  };
}

describe("crash safety (kill -9 of a child process)", () => {
  it("a message accepted while the session was busy, then the process killed: after restart it runs exactly once", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    // The other entry point's turn never gets an answer: the child is killed during it.
    h.llm.enqueue({ type: "stall", text: "thinking" });
    const child = startChild(h.configPath, "accept-while-busy");
    onTestFinished(() => {
      child.child.kill("SIGKILL");
    });
    expect(await child.waitFor(/ACCEPTED \S+ busy=\S+/)).toBe("ACCEPTED crash-me busy=true");
    // Killed while the other turn's model call is open.
    while (h.llm.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    child.child.kill("SIGKILL");
    expect((await child.exited).signal).toBe("SIGKILL");
    expect(h.llm.requests).toHaveLength(1);

    // Restart: a new runner on the same state dir.
    h.llm.enqueue(reply("handled after the crash"));
    const runner = await h.runner();
    const events = recordEvents(runner);
    expect((await runner.list()).map((item) => [item.itemId, item.status])).toEqual([
      ["crash-me", "pending"],
    ]);
    expect(await runner.drain()).toEqual({ turns: 1, items: 1 });
    // Nothing left: a second pass (or a second restart) runs nothing.
    expect(await runner.drain()).toEqual({ turns: 0, items: 0 });

    expect(events.map((event) => event.type)).toEqual(["delivered"]);
    expect(h.llm.requests).toHaveLength(2);
    const view = await sessionView(runner.store, h.config, "main");
    const followupRuns = view.runs.filter((run) => run.entryPoint === "followup");
    expect(followupRuns.map((run) => run.status)).toEqual(["succeeded"]);
    // The killed turn of the other entry point is recorded as interrupted.
    expect(view.runs.filter((run) => run.entryPoint !== "followup").map((run) => run.status)).toEqual([
      "interrupted",
    ]);
    expect(view.userMessages.filter((text) => text === "queued while busy")).toHaveLength(1);
    expect((await runner.list()).map((item) => [item.itemId, item.status])).toEqual([["crash-me", "done"]]);
  });

  it("killed after the turn ended but before the item was completed: after restart it is completed, not run again", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    h.llm.enqueue(reply("the only answer"));
    const child = startChild(h.configPath, "kill-after-turn");
    onTestFinished(() => {
      child.child.kill("SIGKILL");
    });
    const exit = await child.exited;
    expect(exit.signal, child.output().stderr).toBe("SIGKILL");
    expect(h.llm.requests).toHaveLength(1);

    // Restart after the dead worker's lease ran out (the clock is moved past it, no waiting).
    const runner = await h.runner({ clock: new ManualClock(Date.now() + LEASE_MS + 1) });
    const events = recordEvents(runner);
    expect((await runner.list()).map((item) => [item.itemId, item.status])).toEqual([
      ["run-once", "claimed"],
    ]);
    expect(await runner.drain()).toEqual({ turns: 0, items: 1 });
    expect(events).toMatchObject([{ type: "recovered", itemIds: ["run-once"] }]);

    expect(h.llm.requests).toHaveLength(1);
    const view = await sessionView(runner.store, h.config, "main");
    expect(view.runs.map((run) => [run.entryPoint, run.status])).toEqual([["followup", "succeeded"]]);
    expect(view.userMessages).toEqual(["run me exactly once"]);
    expect((await runner.list()).map((item) => [item.itemId, item.status])).toEqual([["run-once", "done"]]);
  });

  it("killed mid-turn: the run is recorded as interrupted and the message runs again after restart (at least once)", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    h.llm.enqueue({ type: "stall", text: "half an ans" });
    const child = startChild(h.configPath, "run-and-wait");
    onTestFinished(() => {
      child.child.kill("SIGKILL");
    });
    while (h.llm.requests.length === 0) {
      if (child.child.exitCode !== null) throw new Error(child.output().stderr);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    child.child.kill("SIGKILL");
    await child.exited;

    h.llm.enqueue(reply("the answer after the restart"));
    // start() picks up what a dead worker left once its lease ran out (the clock is moved past it).
    const runner = await h.runner({ clock: new ManualClock(Date.now() + LEASE_MS + 1) });
    const events = recordEvents(runner);
    await runner.start();
    await runner.whenIdle();

    expect(events).toMatchObject([{ type: "delivered", status: "ok", itemIds: ["mid-turn"] }]);
    expect(h.llm.requests).toHaveLength(2);
    const view = await sessionView(runner.store, h.config, "main");
    expect(view.runs.map((run) => [run.runId.replace(/^followup-[0-9a-f]{32}/, "R"), run.status])).toEqual([
      ["R-2", "succeeded"],
      ["R", "interrupted"],
    ]);
    // The interrupted turn had stored the user message already: it is in the transcript twice (at least once).
    expect(view.userMessages).toEqual(["killed during my turn", "killed during my turn"]);
    expect((await runner.list()).map((item) => [item.itemId, item.status])).toEqual([["mid-turn", "done"]]);
  });
});

// The scheduler end to end with a manual clock: the real kernel, a real SQLite store, real pi and real HTTP to
// tooling/fake-llm. Time moves only through the clock (no sleeping, no timed assertions): intervals, a daily
// job in Europe/Berlin across the DST change, missed runs after downtime under both policies, a run that
// outlasts its interval, two schedulers on one store, delivery and history.

import { TestChannel } from "@agent-kernel/channels-core/testing";
import { fault, reply } from "@agent-kernel/fake-llm";
import { openKernelStore } from "@agent-kernel/kernel";
import { describe, expect, it, type OnTestFinishedHandler } from "vitest";
import { type CronHarness, createCronHarness, HeldChannel } from "../test/harness.ts";
import { ManualClock } from "./clock.ts";
import { type CronScheduler, createCronScheduler } from "./scheduler.ts";
import type { CronRunResult, CronSchedulerOptions } from "./scheduler-types.ts";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

async function harness(onTestFinished: (fn: OnTestFinishedHandler) => void): Promise<CronHarness> {
  const h = await createCronHarness();
  onTestFinished(() => h.close());
  return h;
}

interface Started {
  readonly scheduler: CronScheduler;
  readonly runs: CronRunResult[];
}

/** A scheduler over `h`'s state dir, stopped when the test ends. */
function scheduler(
  h: CronHarness,
  onTestFinished: (fn: OnTestFinishedHandler) => void,
  options: Omit<CronSchedulerOptions, "stateDir" | "onRunFinished">,
): Started {
  const runs: CronRunResult[] = [];
  const created = createCronScheduler({
    stateDir: h.stateDir,
    maxSleepMs: 6 * 3_600_000,
    ...options,
    onRunFinished: (run) => runs.push(run),
  });
  onTestFinished(() => created.stop());
  return { scheduler: created, runs };
}

/** The last user message the model was sent. */
function lastPrompt(h: CronHarness): string {
  const body = h.llm.requests.at(-1)?.body as { messages?: { role: string; content: unknown }[] } | undefined;
  const user = body?.messages?.filter((message) => message.role === "user").at(-1);
  const content = user?.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part: { text?: string }) => part.text ?? "").join("");
  return "";
}

describe.concurrent("cron scheduler", () => {
  it("runs an every-5-minutes job on its slots, each run a new session under agent:main:cron:<id>, and delivers the last payload", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    const config =
      h.config(`{ jobs: [{ id: "digest", name: "Digest", schedule: { kind: "every", everySeconds: 300 },
      payload: { message: "summarise the inbox" }, delivery: { channel: "test", to: "room-1" } }] }`);
    const clock = new ManualClock(at("2026-03-02T10:00:00Z"));
    const channel = new TestChannel({ id: "test" });
    const { scheduler: s, runs } = scheduler(h, onTestFinished, { config, clock, channels: [channel] });
    h.llm.enqueue(reply("report one"), reply("report two"), reply("NO_REPLY"));

    s.start();
    await s.settled();
    expect(h.llm.requests).toHaveLength(0);
    await clock.advanceTo(at("2026-03-02T10:16:00Z"), () => s.idle());

    expect(runs.map((run) => [iso(run.scheduledAt), run.status, run.catchUp])).toEqual([
      ["2026-03-02T10:05:00.000Z", "ok", false],
      ["2026-03-02T10:10:00.000Z", "ok", false],
      ["2026-03-02T10:15:00.000Z", "ok", false],
    ]);
    expect(new Set(runs.map((run) => run.sessionId)).size).toBe(3);
    expect(runs.every((run) => run.sessionKey === "agent:main:cron:digest")).toBe(true);
    expect(lastPrompt(h)).toBe(
      "[cron:digest Digest] summarise the inbox\nCurrent time: Monday, March 2nd, 2026 - 10:15 (UTC)\nReference UTC: 2026-03-02 10:15 UTC",
    );
    // The silent third answer is not delivered.
    expect(channel.sent.map((sent) => [sent.accountId, sent.chatId, sent.text])).toEqual([
      ["default", "room-1", "report one"],
      ["default", "room-1", "report two"],
    ]);
    expect(runs[2]?.delivery).toEqual({ status: "nothing-to-deliver" });

    const history = await s.history("digest");
    expect(history.map((run) => [run.status, run.entryPoint, iso(run.startedAt)])).toEqual([
      ["succeeded", "cron", "2026-03-02T10:15:00.000Z"],
      ["succeeded", "cron", "2026-03-02T10:10:00.000Z"],
      ["succeeded", "cron", "2026-03-02T10:05:00.000Z"],
    ]);
    expect(new Set(history.map((run) => run.sessionId))).toEqual(new Set(runs.map((run) => run.sessionId)));
    const [view] = await s.list();
    expect(view?.state).toMatchObject({
      nextRunAt: at("2026-03-02T10:20:00Z"),
      lastRunAt: at("2026-03-02T10:15:00Z"),
      lastStatus: "ok",
      lastRunId: runs[2]?.runId,
      consecutiveErrors: 0,
    });
    expect(view?.state?.runningSince).toBeUndefined();
  });

  it("runs a daily 09:00 Europe/Berlin job at 08:00Z before and 07:00Z after the DST change, with the local time in the prompt", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    const config =
      h.config(`{ jobs: [{ id: "morning", schedule: { kind: "cron", expr: "0 9 * * *", tz: "Europe/Berlin" },
      payload: { message: "plan the day" } }] }`);
    const clock = new ManualClock(at("2026-03-27T12:00:00Z"));
    const { scheduler: s, runs } = scheduler(h, onTestFinished, { config, clock });
    h.llm.enqueue(reply("a"), reply("b"), reply("c"));
    s.start();
    await clock.advanceTo(at("2026-03-30T12:00:00Z"), () => s.idle());
    expect(runs.map((run) => iso(run.startedAt))).toEqual([
      "2026-03-28T08:00:00.000Z",
      "2026-03-29T07:00:00.000Z",
      "2026-03-30T07:00:00.000Z",
    ]);
    expect(lastPrompt(h)).toContain(
      "[cron:morning morning] plan the day\nCurrent time: Monday, March 30th, 2026 - 09:00 (Europe/Berlin)",
    );
    expect((await s.list())[0]?.state?.nextRunAt).toBe(at("2026-03-31T07:00:00Z"));
  });

  it("after downtime runs a missed job once to catch up (run-once, the default), then keeps its schedule", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    const config =
      h.config(`{ jobs: [{ id: "hourly", schedule: { kind: "cron", expr: "0 * * * *", tz: "America/New_York" },
      payload: { message: "check" } }] }`);
    const clock = new ManualClock(at("2026-03-02T08:00:00Z"));
    const first = scheduler(h, onTestFinished, { config, clock });
    first.scheduler.start();
    await first.scheduler.settled();
    expect((await first.scheduler.list())[0]?.state?.nextRunAt).toBe(at("2026-03-02T09:00:00Z"));
    await first.scheduler.stop();

    // Down from 08:00 to 14:30: the 09:00 … 14:00 slots pass with nobody running.
    clock.jumpTo(at("2026-03-02T14:30:00Z"));
    h.llm.enqueue(reply("caught up"), reply("on time"));
    const second = scheduler(h, onTestFinished, { config, clock });
    second.scheduler.start();
    await second.scheduler.idle();
    expect(second.runs.map((run) => [iso(run.scheduledAt), iso(run.startedAt), run.catchUp])).toEqual([
      ["2026-03-02T09:00:00.000Z", "2026-03-02T14:30:00.000Z", true],
    ]);
    expect((await second.scheduler.list())[0]?.state?.nextRunAt).toBe(at("2026-03-02T15:00:00Z"));
    await clock.advanceTo(at("2026-03-02T15:30:00Z"), () => second.scheduler.idle());
    expect(second.runs.map((run) => [iso(run.scheduledAt), run.catchUp])).toEqual([
      ["2026-03-02T09:00:00.000Z", true],
      ["2026-03-02T15:00:00.000Z", false],
    ]);
    expect(h.llm.requests).toHaveLength(2);
    expect(await second.scheduler.history("hourly")).toHaveLength(2);
  });

  it("after downtime skips the missed slots of a `missedRuns: skip` job and runs at the next one", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    const config = h.config(`{ jobs: [{ id: "hourly", schedule: { kind: "cron", expr: "0 * * * *" },
      payload: { message: "check" }, missedRuns: "skip" }] }`);
    const clock = new ManualClock(at("2026-03-02T08:00:00Z"));
    const first = scheduler(h, onTestFinished, { config, clock });
    await first.scheduler.tick();
    await first.scheduler.stop();

    clock.jumpTo(at("2026-03-02T14:30:00Z"));
    h.llm.enqueue(reply("on time"));
    const second = scheduler(h, onTestFinished, { config, clock });
    const report = await second.scheduler.tick();
    expect(report.skipped).toEqual([
      { jobId: "hourly", missedAt: at("2026-03-02T09:00:00Z"), nextRunAt: at("2026-03-02T15:00:00Z") },
    ]);
    expect(report.started).toEqual([]);
    await second.scheduler.idle();
    expect(h.llm.requests).toHaveLength(0);
    expect(await second.scheduler.history("hourly")).toEqual([]);

    second.scheduler.start();
    await clock.advanceTo(at("2026-03-02T15:10:00Z"), () => second.scheduler.idle());
    expect(second.runs.map((run) => [iso(run.scheduledAt), run.catchUp])).toEqual([
      ["2026-03-02T15:00:00.000Z", false],
    ]);
  });

  it("never overlaps a run that outlasts its interval, in this scheduler or a second one on the same store", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    const config = h.config(`{ jobs: [{ id: "slow", schedule: { kind: "every", everySeconds: 300 },
      payload: { message: "long job" }, delivery: { channel: "test", to: "room" } }] }`);
    const clock = new ManualClock(at("2026-03-02T10:00:00Z"));
    const channel = new HeldChannel();
    const a = scheduler(h, onTestFinished, { config, clock, channels: [channel], maxSleepMs: 60_000 });
    const b = scheduler(h, onTestFinished, { config, clock, channels: [channel], maxSleepMs: 60_000 });
    h.llm.enqueue(reply("first"), reply("second"));
    const bothSettled = () => Promise.all([a.scheduler.settled(), b.scheduler.settled()]);
    a.scheduler.start();
    b.scheduler.start();
    await bothSettled();

    // The 10:05 run reaches delivery and is held there: it is still running at 10:10, 10:15 and 10:20.
    const waiting = channel.hold();
    await clock.advanceTo(at("2026-03-02T10:05:00Z"), bothSettled);
    await waiting;
    await clock.advanceTo(at("2026-03-02T10:22:00Z"), bothSettled);
    expect(h.llm.requests).toHaveLength(1);
    const busy = await Promise.all([a.scheduler.tick(), b.scheduler.tick()]);
    expect(busy.map((report) => [report.started, report.busy])).toEqual([
      [[], ["slow"]],
      [[], ["slow"]],
    ]);
    const leased = await a.scheduler.list();
    expect(leased[0]?.state?.runningSince).toBe(at("2026-03-02T10:05:00Z"));

    channel.release();
    await Promise.all([a.scheduler.idle(), b.scheduler.idle()]);
    const runs = [...a.runs, ...b.runs];
    expect(runs.map((run) => [iso(run.scheduledAt), iso(run.endedAt)])).toEqual([
      ["2026-03-02T10:05:00.000Z", "2026-03-02T10:22:00.000Z"],
    ]);
    // The slots that passed during the run are not queued up: the next is the first after it ended.
    const state = (await a.scheduler.list())[0]?.state;
    expect(state?.nextRunAt).toBe(at("2026-03-02T10:25:00Z"));
    expect(state?.runningSince).toBeUndefined();

    await clock.advanceTo(at("2026-03-02T10:26:00Z"), () =>
      Promise.all([a.scheduler.idle(), b.scheduler.idle()]),
    );
    expect(h.llm.requests).toHaveLength(2);
    expect([...a.runs, ...b.runs]).toHaveLength(2);
    expect(await a.scheduler.history("slow")).toHaveLength(2);
  });

  it("two schedulers ticking at the same due slot start exactly one run between them", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    const config = h.config(
      `{ jobs: [{ id: "race", schedule: { kind: "every", everySeconds: 60 }, payload: { message: "go" } }] }`,
    );
    const clock = new ManualClock(at("2026-03-02T10:00:00Z"));
    const a = scheduler(h, onTestFinished, { config, clock });
    const b = scheduler(h, onTestFinished, { config, clock });
    await a.scheduler.tick();
    for (let minute = 1; minute <= 4; minute++) {
      h.llm.enqueue(reply(`run ${minute}`));
      clock.jumpTo(at("2026-03-02T10:00:00Z") + minute * 60_000);
      const reports = await Promise.all([a.scheduler.tick(), b.scheduler.tick()]);
      expect(reports.flatMap((report) => report.started)).toHaveLength(1);
      await Promise.all([a.scheduler.idle(), b.scheduler.idle()]);
    }
    expect(h.llm.requests).toHaveLength(4);
    expect([...a.runs, ...b.runs]).toHaveLength(4);
    expect(await b.scheduler.history("race")).toHaveLength(4);
  });

  it("takes over the lease of a scheduler that died mid-run only once the lease has expired", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    const config = h.config(
      `{ jobs: [{ id: "orphan", schedule: { kind: "every", everySeconds: 300 }, payload: { message: "m" } }] }`,
    );
    const clock = new ManualClock(at("2026-03-02T10:00:00Z"));
    const { scheduler: s, runs } = scheduler(h, onTestFinished, { config, clock, leaseMs: 600_000 });
    await s.tick();
    // Another scheduler claimed the 10:05 slot at 10:05 and died without finishing.
    const store = await openKernelStore({ stateDir: h.stateDir });
    onTestFinished(() => store.close());
    await store.cron.update("orphan", (current) => ({
      ...current,
      runningSince: at("2026-03-02T10:05:00Z"),
    }));
    clock.jumpTo(at("2026-03-02T10:14:00Z"));
    expect((await s.tick()).busy).toEqual(["orphan"]);
    h.llm.enqueue(reply("recovered"));
    clock.jumpTo(at("2026-03-02T10:15:00Z"));
    const report = await s.tick();
    await s.idle();
    expect(report.started).toEqual([
      { jobId: "orphan", scheduledAt: at("2026-03-02T10:05:00Z"), catchUp: true },
    ]);
    expect(runs.map((run) => run.status)).toEqual(["ok"]);
    expect((await store.cron.get("orphan"))?.runningSince).toBeUndefined();
  });

  it("a run stopped by stop() keeps its slot: not a failure, and the next start runs it as a catch-up", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    const config = h.config(`{ jobs: [{ id: "once", schedule: { kind: "at", at: "2026-03-02T10:00:00Z" },
      payload: { message: "remind me" } }] }`);
    const clock = new ManualClock(at("2026-03-02T10:00:00Z"));
    h.llm.enqueue(reply("never finished", { latencyMs: 60_000 }));
    const first = scheduler(h, onTestFinished, { config, clock });
    expect((await first.scheduler.tick()).started.map((run) => run.jobId)).toEqual(["once"]);
    for (let waited = 0; h.llm.requests.length === 0 && waited < 20_000; waited += 20)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(h.llm.requests).toHaveLength(1);
    await first.scheduler.stop();
    expect(first.runs.map((run) => [run.status, run.outcome?.status])).toEqual([["aborted", "aborted"]]);

    // A one-shot job stopped mid-run is not used up, and the stop is not counted as a failure.
    const second = scheduler(h, onTestFinished, { config, clock });
    expect((await second.scheduler.list())[0]?.state).toMatchObject({
      lastStatus: "aborted",
      consecutiveErrors: 0,
      nextRunAt: at("2026-03-02T10:00:00Z"),
    });
    h.llm.enqueue(reply("reminded"));
    // restarted two hours later: the slot was missed meanwhile
    clock.jumpTo(at("2026-03-02T12:00:00Z"));
    const report = await second.scheduler.tick();
    await second.scheduler.idle();
    expect(report.started).toEqual([
      { jobId: "once", scheduledAt: at("2026-03-02T10:00:00Z"), catchUp: true },
    ]);
    expect(second.runs.map((run) => run.status)).toEqual(["ok"]);
    const done = (await second.scheduler.list())[0]?.state;
    expect(done?.nextRunAt).toBeUndefined();
    expect(done?.lastStatus).toBe("ok");
  });

  it("a job kept waiting by cron.maxConcurrentRuns runs late but is not treated as missed", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    const config = h.config(`{ maxConcurrentRuns: 1, jobs: [
      { id: "first", schedule: { kind: "cron", expr: "0 9 * * *" }, payload: { message: "one" }, delivery: { channel: "test", to: "r" } },
      { id: "second", schedule: { kind: "cron", expr: "0 9 * * *" }, payload: { message: "two" }, missedRuns: "skip" },
    ] }`);
    const clock = new ManualClock(at("2026-03-02T08:00:00Z"));
    const channel = new HeldChannel();
    const { scheduler: s, runs } = scheduler(h, onTestFinished, { config, clock, channels: [channel] });
    h.llm.enqueue(reply("one done"), reply("two done"));
    s.start();
    const waiting = channel.hold();
    await clock.advanceTo(at("2026-03-02T09:00:00Z"), () => s.settled());
    await waiting;
    expect((await s.tick()).deferred).toEqual(["second"]);
    // The first run holds the only slot for ten minutes.
    await clock.advanceTo(at("2026-03-02T09:10:00Z"), () => s.settled());
    channel.release();
    await s.idle();
    expect(runs.map((run) => [run.jobId, iso(run.startedAt), run.catchUp])).toEqual([
      ["first", "2026-03-02T09:00:00.000Z", false],
      ["second", "2026-03-02T09:10:00.000Z", false],
    ]);
  });

  it("records a failed run and a failed delivery as errors, counting consecutive errors", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    const config = h.config(`{ jobs: [{ id: "notify", schedule: { kind: "every", everySeconds: 60 },
      payload: { message: "ping" }, delivery: { channel: "telegram", to: "42" } }] }`);
    const clock = new ManualClock(at("2026-03-02T10:00:00Z"));
    const { scheduler: s, runs } = scheduler(h, onTestFinished, {
      config,
      clock,
      channels: [new TestChannel()],
    });
    h.llm.enqueue(reply("pong"));
    await s.tick();
    clock.jumpTo(at("2026-03-02T10:01:00Z"));
    await s.tick();
    await s.idle();
    expect(runs[0]?.status).toBe("error");
    expect(runs[0]?.error).toBe(
      'delivery to telegram:42 failed: no channel adapter "telegram" was given to the scheduler (have: test)',
    );
    expect((await s.list())[0]?.state).toMatchObject({ lastStatus: "error", consecutiveErrors: 1 });
    // The turn itself succeeded and is in the history.
    expect((await s.history("notify"))[0]?.status).toBe("succeeded");
  });

  it("records a channel's send failure as the run's error and sends media as media", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    const config = h.config(`{ jobs: [{ id: "chart", schedule: { kind: "every", everySeconds: 60 },
      payload: { message: "chart" }, delivery: { channel: "test", to: "room" } }] }`);
    const clock = new ManualClock(at("2026-03-02T10:00:00Z"));
    const channel = new TestChannel({ id: "test" });
    channel.failNextSends(new Error("rate limited"));
    const { scheduler: s, runs } = scheduler(h, onTestFinished, { config, clock, channels: [channel] });
    h.llm.enqueue(reply("first"), reply("Here it is\nMEDIA: https://example.com/chart.png"));
    s.start();
    await clock.advanceTo(at("2026-03-02T10:02:00Z"), () => s.idle());
    expect(runs.map((run) => [run.status, run.error])).toEqual([
      ["error", "delivery to test:room failed: rate limited"],
      ["ok", undefined],
    ]);
    expect(channel.sent.map((sent) => [sent.text, sent.media])).toEqual([
      ["Here it is", [{ kind: "image", url: "https://example.com/chart.png" }]],
    ]);
  });

  it("backs off after consecutive failed runs as OpenClaw does (30 s, 1 min, 5 min, …), and resets on success", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    const config = h.config(
      `{ jobs: [{ id: "flaky", schedule: { kind: "every", everySeconds: 60 }, payload: { message: "m" } }] }`,
    );
    const clock = new ManualClock(at("2026-03-02T10:00:00Z"));
    const { scheduler: s, runs } = scheduler(h, onTestFinished, { config, clock });
    h.llm.enqueue(fault("auth", { times: 3 }), reply("fine again"));
    s.start();
    await clock.advanceTo(at("2026-03-02T10:08:30Z"), () => s.idle());
    // Errors at 10:01 (+30 s → the 10:02 slot), 10:02 (+1 min → 10:03), 10:03 (+5 min → 10:08), then success.
    expect(runs.map((run) => [iso(run.startedAt), run.status])).toEqual([
      ["2026-03-02T10:01:00.000Z", "error"],
      ["2026-03-02T10:02:00.000Z", "error"],
      ["2026-03-02T10:03:00.000Z", "error"],
      ["2026-03-02T10:08:00.000Z", "ok"],
    ]);
    expect((await s.list())[0]?.state).toMatchObject({
      consecutiveErrors: 0,
      nextRunAt: at("2026-03-02T10:09:00Z"),
    });
  });

  it("runNow runs a job outside its schedule and keeps the next slot", async ({ onTestFinished }) => {
    const h = await harness(onTestFinished);
    const config = h.config(
      `{ jobs: [{ id: "adhoc", schedule: { kind: "cron", expr: "0 9 * * *" }, payload: { message: "now" } }] }`,
    );
    const clock = new ManualClock(at("2026-03-02T10:00:00Z"));
    const { scheduler: s } = scheduler(h, onTestFinished, { config, clock });
    await s.tick();
    h.llm.enqueue(reply("done"));
    const run = await s.runNow("adhoc");
    expect(run).toMatchObject({ status: "ok", sessionKey: "agent:main:cron:adhoc", catchUp: false });
    expect((await s.list())[0]?.state?.nextRunAt).toBe(at("2026-03-03T09:00:00Z"));
    await expect(s.runNow("nope")).rejects.toThrow('no cron job "nope" (jobs: adhoc)');
  });
});

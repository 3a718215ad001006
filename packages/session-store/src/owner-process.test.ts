// A run's owner is its process, not just its pid: real /proc data of a live child process decides (same pid and
// start time: alive; another start time or boot: gone), rows without a start time keep the pid-only rule, and
// a store records its process's start with every run it starts.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  currentBootId,
  isOtherProcess,
  ownProcessStart,
  parseStatStartTime,
  readProcessStart,
} from "./owner-process.ts";
import { isRunOwnerAlive, type RunOwner } from "./runs.ts";
import { controlPlanePath } from "./state-dir.ts";
import { openSessionStore } from "./store.ts";

const linux = process.platform === "linux";

describe("parseStatStartTime", () => {
  /** A /proc/<pid>/stat line with `comm` as the command name and `starttime` as field 22. */
  function statLine(comm: string, starttime: string): string {
    const rest = Array.from({ length: 50 }, (_, index) => String(index + 3));
    rest[0] = "S";
    rest[19] = starttime;
    return `4242 (${comm}) ${rest.join(" ")}\n`;
  }

  it("reads field 22, counting from the last parenthesis of the command name", () => {
    expect(parseStatStartTime(statLine("node", "987654321"))).toBe(987_654_321);
    expect(parseStatStartTime(statLine("a) (b c) S 1 2", "12345"))).toBe(12_345);
    expect(parseStatStartTime(statLine("big", "9007199254740991"))).toBe(9_007_199_254_740_991);
  });

  it("reads nothing from a line that is not a stat line", () => {
    expect(parseStatStartTime("")).toBeUndefined();
    expect(parseStatStartTime("4242 (node) S 1 2 3")).toBeUndefined();
    expect(parseStatStartTime(statLine("node", "x1"))).toBeUndefined();
    expect(parseStatStartTime(statLine("node", "99999999999999999999"))).toBeUndefined();
  });
});

describe("isOtherProcess", () => {
  const now = { startTime: 500, bootId: "boot-a" };

  it("is another process when the boot or the start time differs", () => {
    expect(isOtherProcess({ startTime: 500, bootId: "boot-a" }, now, "boot-a")).toBe(false);
    expect(isOtherProcess({ startTime: 501, bootId: "boot-a" }, now, "boot-a")).toBe(true);
    expect(isOtherProcess({ startTime: 500, bootId: "boot-b" }, now, "boot-a")).toBe(true);
    // Another boot is proof even when the pid's process cannot be read.
    expect(isOtherProcess({ startTime: 500, bootId: "boot-b" }, undefined, "boot-a")).toBe(true);
  });

  it("is not proof when either side is unknown (old rows, another OS, /proc hidden)", () => {
    expect(isOtherProcess({}, now, "boot-a")).toBe(false);
    expect(isOtherProcess({ startTime: 501, bootId: "boot-a" }, undefined, "boot-a")).toBe(false);
    expect(isOtherProcess({ startTime: 501, bootId: "boot-b" }, undefined, undefined)).toBe(false);
  });
});

describe.skipIf(!linux)("a run owner's process on Linux", () => {
  let child: ChildProcess;
  let pid: number;

  beforeAll(async () => {
    child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
    await once(child, "spawn");
    pid = child.pid ?? 0;
  });

  afterAll(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await once(child, "exit");
    }
  });

  const owner = (extra: Partial<RunOwner> = {}): RunOwner => ({
    host: hostname(),
    pid,
    token: "another-process",
    ...extra,
  });

  it("reads this process's start and the boot id from /proc", () => {
    const bootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    expect(currentBootId()).toBe(bootId);
    const own = ownProcessStart();
    expect(own).toEqual({ startTime: expect.any(Number), bootId });
    expect(own?.startTime).toBeGreaterThan(0);
    expect(readProcessStart(process.pid)).toEqual(own);
    // The child started after this process.
    expect(readProcessStart(pid)?.startTime).toBeGreaterThanOrEqual(own?.startTime ?? 0);
  });

  it("same pid and start time: alive; another start time or boot: gone; no start recorded: the pid decides", () => {
    const start = readProcessStart(pid);
    expect(start).toBeDefined();
    if (start === undefined) return;
    expect(isRunOwnerAlive(owner(start))).toBe(true);
    expect(isRunOwnerAlive(owner({ ...start, startTime: start.startTime + 1 }))).toBe(false);
    expect(isRunOwnerAlive(owner({ ...start, startTime: start.startTime - 1 }))).toBe(false);
    expect(isRunOwnerAlive(owner({ ...start, bootId: "another-boot" }))).toBe(false);
    expect(isRunOwnerAlive(owner())).toBe(true);
    // Another host's process cannot be probed: it stays alive whatever it recorded.
    expect(isRunOwnerAlive(owner({ host: `not-${hostname()}`, ...start, startTime: 1 }))).toBe(true);
  });

  it("a pid that is free is gone, whatever it recorded", async () => {
    const start = readProcessStart(pid);
    child.kill("SIGKILL");
    await once(child, "exit");
    expect(isRunOwnerAlive(owner(start))).toBe(false);
    expect(isRunOwnerAlive(owner())).toBe(false);
  });

  it("a store records its process's start with every run it starts", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "agent-kernel-owner-"));
    try {
      const store = await openSessionStore({ stateDir });
      const ref = { agentId: "main", sessionKey: "agent:main:main", sessionId: "s1", entryPoint: "agent" };
      await store.runs.start({ ...ref, runId: "r1" });
      await store.close();
      const db = new Database(controlPlanePath(stateDir), { readonly: true });
      try {
        const row = db
          .prepare("SELECT owner_pid, owner_start_time, owner_boot_id FROM runs WHERE run_id = 'r1'")
          .get();
        expect(row).toEqual({
          owner_pid: process.pid,
          owner_start_time: ownProcessStart()?.startTime,
          owner_boot_id: currentBootId(),
        });
      } finally {
        db.close();
      }
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});

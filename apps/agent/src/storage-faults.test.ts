// `agent` when its store fails it, on real files with real processes (the command against tooling/fake-llm):
// a full disk mid-turn (the agent's folder on a small tmpfs), read-only database files (immutable for root),
// a damaged transcript row, a missing parent entry, and an empty agent database. Each ends with exit 5, a
// message naming the file (and the row) and what to do, and the run stored as failed with reason `storage`
// — or not at all, when the control plane itself is the file that cannot be written; a reply that was
// produced is still printed. Where a fault cannot be made here (not root, no tmpfs, no chattr) the test is
// skipped, saying why.
import { existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { reply } from "@agent-kernel/fake-llm";
import { describe, expect, it, type OnTestFinishedHandler } from "vitest";
import { type CliHarness, createCliHarness } from "../test/cli-harness.ts";
import {
  fillLeaving,
  makeReadOnly,
  mountSmallDisk,
  transcriptRows,
  withDatabase,
} from "../test/storage-faults.ts";
import { EXIT } from "./exit-codes.ts";

async function harness(onTestFinished: (fn: OnTestFinishedHandler) => void): Promise<CliHarness> {
  const h = await createCliHarness();
  onTestFinished(() => h.close());
  return h;
}

const agentDb = (h: CliHarness) => join(h.stateDir, "agents", "main", "agent.sqlite");
const controlPlane = (h: CliHarness) => join(h.stateDir, "state", "kernel.sqlite");

/** The run id a failure message names. */
function runIdIn(stderr: string): string {
  const id = /run ([0-9a-f-]{36})/.exec(stderr)?.[1];
  if (id === undefined) throw new Error(`no run id in: ${stderr}`);
  return id;
}

async function storedRun(h: CliHarness, runId: string) {
  const shown = await h.run(["runs", "show", runId, "--json"]);
  if (shown.code !== EXIT.ok) return undefined;
  return (
    JSON.parse(shown.stdout) as { run: { status: string; errorReason?: string; errorMessage?: string } }
  ).run;
}

/** Two answered turns, so the session has a history. */
async function twoTurns(h: CliHarness): Promise<void> {
  h.llm.enqueue(reply("First answer."), reply("Second answer."));
  expect((await h.run(["-m", "first question"])).code).toBe(EXIT.ok);
  expect((await h.run(["-m", "second question"])).code).toBe(EXIT.ok);
}

// Each case runs the real command three or four times (about a second of CPU each on an idle core), and the
// cases run at once: on a loaded 2-core machine that takes minutes, so each case may.
const CASE_TIMEOUT_MS = 300_000;

describe.concurrent("agent when its store fails it", () => {
  it(
    "a full disk mid-turn: the reply is printed and said to be unstored, exit 5, the run failed with reason storage",
    async ({ onTestFinished, skip }) => {
      const h = await harness(onTestFinished);
      await twoTurns(h);
      const folder = join(h.stateDir, "agents", "main");
      const disk = mountSmallDisk(folder, 2048);
      if (typeof disk === "string") return skip(disk);
      onTestFinished(() => disk.unmount());
      // Room for the question (and SQLite's shared memory), not for a 138 KB answer (under the reply limit).
      fillLeaving(folder, 96);
      const answer = "The answer, at length. ".repeat(100);
      h.llm.enqueue(reply(answer, { repeat: 60 }));
      const result = await h.run(["-m", "a long one, please"]);
      expect(result.code).toBe(EXIT.store);
      expect(result.stdout.trim()).toBe(answer.repeat(60).trim());
      expect(result.stderr).toContain(
        `the disk holding ${agentDb(h)} is full (SQLITE_FULL): free space on it`,
      );
      expect(result.stderr).toContain("The reply above was not stored: the next turn will not see it.");
      const run = await storedRun(h, runIdIn(result.stderr));
      expect(run).toMatchObject({ status: "failed", errorReason: "storage" });
      expect(run?.errorMessage).toContain(`the disk holding ${agentDb(h)} is full`);

      // Space again: the session goes on from what was stored (the question, not the answer).
      disk.unmount();
      h.llm.enqueue(reply("Third answer."));
      const next = await h.run(["-m", "again"]);
      expect(next.code).toBe(EXIT.ok);
    },
    CASE_TIMEOUT_MS,
  );

  it(
    "a read-only agent database: exit 5 naming it and why, the run failed with reason storage",
    async ({ onTestFinished, skip }) => {
      const h = await harness(onTestFinished);
      await twoTurns(h);
      const readOnly = makeReadOnly(agentDb(h));
      if (typeof readOnly === "string") return skip(readOnly);
      onTestFinished(() => readOnly.undo());
      h.llm.enqueue(reply("Never stored."));
      const result = await h.run(["-m", "third question"]);
      expect(result.code).toBe(EXIT.store);
      expect(result.stderr).toContain(`${agentDb(h)} is read-only (SQLITE_READONLY)`);
      expect(result.stderr).toMatch(/chattr -i|chmod u\+w/);
      expect(result.stderr).not.toContain("unexpected failure");
      const run = await storedRun(h, runIdIn(result.stderr));
      expect(run).toMatchObject({ status: "failed", errorReason: "storage" });
      readOnly.undo();
      h.llm.enqueue(reply("Stored now."));
      expect((await h.run(["-m", "fourth question"])).code).toBe(EXIT.ok);
    },
    CASE_TIMEOUT_MS,
  );

  it(
    "a read-only control plane: exit 5 naming it, no run recorded (there is nowhere to record it)",
    async ({ onTestFinished, skip }) => {
      const h = await harness(onTestFinished);
      await twoTurns(h);
      const readOnly = makeReadOnly(controlPlane(h));
      if (typeof readOnly === "string") return skip(readOnly);
      onTestFinished(() => readOnly.undo());
      h.llm.enqueue(reply("Never stored."));
      const result = await h.run(["-m", "third question"]);
      expect(result.code).toBe(EXIT.store);
      expect(result.stderr).toContain(`${controlPlane(h)} is read-only (SQLITE_READONLY)`);
      expect(result.stderr).not.toMatch(/unexpected failure|no run/);
      readOnly.undo();
      expect(await storedRun(h, runIdIn(result.stderr))).toBeUndefined();
    },
    CASE_TIMEOUT_MS,
  );

  it(
    "a damaged transcript row: set aside and reported once (file, session, row), then the session goes on from its last good ancestor",
    async ({ onTestFinished }) => {
      const h = await harness(onTestFinished);
      await twoTurns(h);
      const rows = transcriptRows(agentDb(h));
      // The first answer: the second question hangs below it, and the branch goes on from the first question.
      const damaged = rows.find((row) => row.body.includes("First answer."));
      if (damaged === undefined) throw new Error("no row holds the first answer");
      const before = rows.find((row) => row.id === damaged.parentId);
      withDatabase(agentDb(h), (db) =>
        db
          .prepare("UPDATE transcript_entries SET body = ? WHERE seq = ?")
          .run('{"type":"message",', damaged.seq),
      );

      const result = await h.run(["-m", "third question"]);
      expect(result.code).toBe(EXIT.store);
      expect(result.stderr).toContain(`transcript row seq ${damaged.seq} (entry ${damaged.id}) of session `);
      expect(result.stderr).toContain(`in ${agentDb(h)} is not valid JSON`);
      expect(result.stderr).toContain(`now ends at entry ${before?.id}, its last good ancestor`);
      const run = await storedRun(h, runIdIn(result.stderr));
      expect(run).toMatchObject({ status: "failed", errorReason: "storage" });
      // The model was not asked: the history had just changed under the turn.
      expect(h.llm.requests).toHaveLength(2);

      h.llm.enqueue(reply("Going on."));
      const next = await h.run(["-m", "fourth question"]);
      expect(next.code).toBe(EXIT.ok);
      expect(next.stdout).toBe("Going on.\n");
      const sent = h.llm.requests.at(-1)?.body as { messages: { role: string; content: unknown }[] };
      const userTexts = sent.messages
        .filter((message) => message.role === "user")
        .map((message) => JSON.stringify(message.content));
      expect(userTexts).toHaveLength(2);
      expect(userTexts[0]).toContain("first question");
      expect(userTexts[1]).toContain("fourth question");

      // The bytes are where they were; doctor lists the row, and finds nothing else wrong.
      withDatabase(agentDb(h), (db) =>
        expect(db.prepare("SELECT body FROM transcript_entries WHERE seq = ?").get(damaged.seq)).toEqual({
          body: '{"type":"message",',
        }),
      );
      const doctor = await h.run(["doctor"]);
      expect(doctor.stdout).toContain(`set aside as damaged: ${agentDb(h)}, session agent:main:main (`);
      expect(doctor.stdout).toContain(`row seq ${damaged.seq} (entry ${damaged.id}) is not valid JSON`);
      expect(doctor.code).toBe(EXIT.ok);
    },
    CASE_TIMEOUT_MS,
  );

  it(
    "a missing parent entry: doctor names the session, the entry and the missing parent",
    async ({ onTestFinished }) => {
      const h = await harness(onTestFinished);
      await twoTurns(h);
      const rows = transcriptRows(agentDb(h));
      const middle = rows.filter((row) => row.type === "message")[1];
      const child = rows.find((row) => row.parentId === middle?.id);
      if (middle === undefined || child === undefined) throw new Error("no middle entry with a child");
      withDatabase(agentDb(h), (db) =>
        db.prepare("DELETE FROM transcript_entries WHERE seq = ?").run(middle.seq),
      );
      const doctor = await h.run(["doctor"]);
      expect(doctor.code).toBe(EXIT.failed);
      expect(doctor.stdout).toMatch(
        new RegExp(
          `problem: session agent:main:main \\([0-9a-f-]+\\): the active branch is broken: entry ${child.id} names parent ${middle.id}, which is not in the transcript`,
        ),
      );
    },
    CASE_TIMEOUT_MS,
  );

  it(
    "an empty agent database: refused (exit 5, naming it), never a silently empty history",
    async ({ onTestFinished }) => {
      const h = await harness(onTestFinished);
      await twoTurns(h);
      writeFileSync(agentDb(h), "");
      const result = await h.run(["-m", "third question"]);
      expect(result.code).toBe(EXIT.store);
      expect(result.stderr).toContain(`${agentDb(h)} is empty (0 bytes), and this store did not create it`);
      expect(result.stderr).toContain("restore it from a backup, or move it away");
      expect(statSync(agentDb(h)).size).toBe(0);
      expect(h.llm.requests).toHaveLength(2);
      const run = await storedRun(h, runIdIn(result.stderr));
      expect(run).toMatchObject({ status: "failed", errorReason: "storage" });
      const doctor = await h.run(["doctor"]);
      expect(doctor.code).toBe(EXIT.failed);
      expect(doctor.stdout).toContain(`${agentDb(h)} is empty (0 bytes)`);
      // A missing one (another agent's) is created as always.
      expect(existsSync(join(h.stateDir, "agents", "ops", "agent.sqlite"))).toBe(false);
      mkdirSync(join(h.workspaceDir, "ops"), { recursive: true });
      h.llm.enqueue(reply("Hello from ops."));
      expect((await h.run(["-m", "hi", "--agent", "ops"])).code).toBe(EXIT.ok);
    },
    CASE_TIMEOUT_MS,
  );
});

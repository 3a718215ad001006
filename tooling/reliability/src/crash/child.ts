// The crash trials' child process: opens the real SQLite store, runs real kernel turns against tooling/fake-llm
// over HTTP, and reports on stdout (a pipe: each write is synchronous on Linux, so a line the parent reads was
// written before the kill) what it is about to write and what is committed, until the parent kills it with
// SIGKILL or it finishes its turns. Owns only the reporting; the checks are in crash.test.ts.
//   node --conditions=@agent-kernel/source src/crash/child.ts <stateDir> <workspaceDir> <baseUrl>
// then, on stdin, one line: `<trial> <turns> <sessionKey>...`.
//
// Loading pi takes seconds and is not what the trials test, so the child loads everything first, prints
// `loaded` and waits for its line on stdin: the parent loads the next child while it runs the current trial.
// Lines: `loaded`; `ready` once the store is open (kills land after it); `run <runId> <sessionKey>` before a
// turn is handed to the kernel; `pre <sessionId> <entryId>[,<entryId>…]` before a transcript write (one entry,
// or a batch the store writes in one transaction); `ok <sessionId> <ids>` once that write returned (committed:
// the store's writes are synchronous and durable against a process crash when they return); `end <runId>
// <status>` once the turn's outcome is back (its run record is final); `done` after the last turn.
import { writeSync } from "node:fs";
import { createKernel } from "@agent-kernel/kernel";
import {
  openSessionStore,
  type SessionStore,
  type Transcript,
  type TranscriptEntry,
} from "@agent-kernel/session-store";
import { fakeLlmConfig } from "../support/turn-setup.ts";

const [stateDir = "", workspaceDir = "", baseUrl = ""] = process.argv.slice(2);

function report(line: string): void {
  writeSync(1, `${line}\n`);
}

/** Binds each method to its object (the store keeps private fields, so a proxy must not be `this`). */
function bindTo<T extends object>(target: T, replace: (property: string | symbol) => unknown): T {
  return new Proxy(target, {
    get(object, property) {
      const replaced = replace(property);
      if (replaced !== undefined) return replaced;
      const value: unknown = Reflect.get(object, property, object);
      return typeof value === "function" ? value.bind(object) : value;
    },
  });
}

/** A transcript that may write several entries in one transaction (both store backends offer it). */
type BatchTranscript = Transcript & { appendMany?(entries: readonly TranscriptEntry[]): void };

function reportingTranscript(transcript: BatchTranscript): Transcript {
  const append: Transcript["append"] = (entry) => {
    report(`pre ${transcript.sessionId} ${entry.id}`);
    transcript.append(entry);
    report(`ok ${transcript.sessionId} ${entry.id}`);
  };
  // One transaction, all or nothing: reported as one unit.
  const appendMany = (entries: readonly TranscriptEntry[]) => {
    const ids = entries.map((entry) => entry.id).join(",");
    report(`pre ${transcript.sessionId} ${ids}`);
    transcript.appendMany?.(entries);
    report(`ok ${transcript.sessionId} ${ids}`);
  };
  return bindTo(transcript, (property) => {
    if (property === "append") return append;
    if (property === "appendMany" && transcript.appendMany !== undefined) return appendMany;
    return undefined;
  });
}

/** The first line on stdin. */
function readOrder(): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    process.stdin.setEncoding("utf8");
    process.stdin.on("data", (chunk: string) => {
      text += chunk;
      const end = text.indexOf("\n");
      if (end >= 0) {
        process.stdin.pause();
        resolve(text.slice(0, end));
      }
    });
  });
}

report("loaded");
const [trial = "0", turnsText = "1", ...sessionKeys] = (await readOrder()).split(" ");
const store = await openSessionStore({ stateDir });
const openTranscript = ((...args: Parameters<SessionStore["openTranscript"]>) =>
  reportingTranscript(store.openTranscript(...args))) as SessionStore["openTranscript"];
const observed = bindTo(store, (property) => (property === "openTranscript" ? openTranscript : undefined));

const config = fakeLlmConfig({ baseUrl, stateDir, workspaceDir });
const kernel = createKernel({
  config,
  store: observed,
  paths: { env: {}, homeDir: stateDir, cwd: workspaceDir },
  executorSettings: { transientRetryDelayMs: 0 },
});
report("ready");

const turns = Number(turnsText);
for (let turn = 0; turn < turns; turn++) {
  const sessionKey = sessionKeys[turn % sessionKeys.length] ?? "crash";
  const runId = `trial${trial}-turn${turn}`;
  const tool = turn % 2 === 1 ? " [tool]" : "";
  const prompt = `[trial ${trial} turn ${turn}] on ${sessionKey}${tool}`;
  report(`run ${runId} ${sessionKey}`);
  const prepared = await kernel.prepareSession({ sessionKey });
  const outcome = await kernel.executeTurn(prepared, { prompt, runId, timeoutMs: 30_000 });
  report(`end ${runId} ${outcome.status}`);
}
await store.close();
report("done");
// pi's HTTP agents and timers may keep the loop alive; the trial is over.
process.exit(0);

// The transcript against pi's own JSONL SessionManager, in the same run: appending 10k entries one by one
// (each durable when it returns), and reading the active branch of a 10k-entry session. Durability is
// stated in every case name: pi's JSONL appends with appendFileSync and never fsyncs (it survives a process
// crash, not a power loss); our `normal` is the same class (a line in the store's append journal, folded into
// SQLite's WAL with synchronous=NORMAL; `appends: "commit"` commits each entry instead); `full` fsyncs every
// commit and survives a power loss. An append case ends with `store.flush()`, so its time includes putting
// every entry into SQLite. Reads are either cold (the process-wide read cache cleared before each
// iteration: every entry parsed from SQLite) or warm (the entries were read before in this process, which is
// how the turn executor reads a session every turn). The cases marked "explains" show where the time goes: an
// append whose parent this process has not seen (checked in SQL), the JSON.parse every cold read must pay, and
// the kernel's own cold path (the pi adapter: getEntries into pi's in-memory manager, then its context).
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineSuite } from "@agent-kernel/bench";
import { type FileEntry, SessionManager } from "@earendil-works/pi-coding-agent";
import {
  clearTranscriptCache,
  type Durability,
  openSessionStore,
  type SqliteSessionStore,
  type TranscriptEntry,
  type WalCheckpoint,
} from "../src/index.ts";

const ENTRIES = 10_000;
const AGENT = "main";

/** A conversation as pi writes it: alternating user and assistant messages with a few hundred bytes each. */
function message(index: number) {
  const text = `message ${index}: ${"lorem ipsum dolor sit amet ".repeat(8)}`;
  return index % 2 === 0
    ? {
        role: "user" as const,
        content: [{ type: "text" as const, text }],
        timestamp: 1_767_225_600_000 + index,
      }
    : {
        role: "assistant" as const,
        content: [{ type: "text" as const, text }],
        api: "faux",
        provider: "faux",
        model: "faux-1",
        usage: {
          input: 10,
          output: 20,
          cacheRead: 0,
          cacheWrite: 0,
          totalTokens: 30,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
        },
        stopReason: "stop" as const,
        timestamp: 1_767_225_600_000 + index,
      };
}

function entry(index: number): TranscriptEntry {
  return {
    type: "message",
    id: index.toString(16).padStart(8, "0"),
    parentId: index === 0 ? null : (index - 1).toString(16).padStart(8, "0"),
    timestamp: new Date(1_767_225_600_000 + index).toISOString(),
    message: message(index),
  };
}

const header = (id: string) => ({
  type: "session" as const,
  version: 3,
  id,
  timestamp: new Date(0).toISOString(),
  cwd: "/work",
});

interface StoreState {
  readonly dir: string;
  readonly store: SqliteSessionStore;
}

async function freshStore(
  durability: Durability,
  walCheckpoint?: WalCheckpoint,
  appends?: "journal" | "commit",
): Promise<StoreState> {
  const dir = mkdtempSync(join(tmpdir(), "bench-store-"));
  return {
    dir,
    store: await openSessionStore({
      stateDir: dir,
      durability,
      ...(walCheckpoint === undefined ? {} : { walCheckpoint }),
      ...(appends === undefined ? {} : { appends }),
    }),
  };
}

/** The appends, then `flush`: every journaled entry is in SQLite (readable by other processes) when it ends. */
async function appendAll(state: StoreState, makeEntry: (index: number) => TranscriptEntry = entry) {
  const transcript = state.store.openTranscript(AGENT, "s", { header: header("s") });
  for (let index = 0; index < ENTRIES; index++) transcript.append(makeEntry(index));
  await state.store.flush();
}

async function dropStore(state: StoreState): Promise<void> {
  await state.store.close();
  rmSync(state.dir, { recursive: true, force: true });
}

const appendCases = [
  {
    name: `store append ×${ENTRIES} (durability normal: a journal line per entry, folded into SQLite by the burst; flush included)`,
    before: () => freshStore("normal"),
    run: appendAll,
    after: dropStore,
  },
  {
    name: `store append ×${ENTRIES} (durability normal, appends "commit": one WAL commit per entry)`,
    before: () => freshStore("normal", undefined, "commit"),
    run: appendAll,
    after: dropStore,
  },
];
// Last in its round: its fsyncs make the file system commit its journal, which slows whatever writes next.
const fsyncCase = {
  name: `store append ×${ENTRIES} (durability full: one WAL commit and fsync per entry)`,
  before: () => freshStore("full"),
  run: appendAll,
  after: dropStore,
};

// The read fixture: one 10k-entry session in pi's JSONL format and in the store.
const readDir = mkdtempSync(join(tmpdir(), "bench-read-"));
const piWriter = SessionManager.create("/work", join(readDir, "pi"));
for (let index = 0; index < ENTRIES; index++) piWriter.appendMessage(message(index));
const piFile = piWriter.getSessionFile() ?? "";
// The store's stored JSON of every entry, already in memory: what a cold read must at least parse.
const storedBodies = Array.from({ length: ENTRIES }, (_u, i) => JSON.stringify(entry(i)));
const readStore = await openSessionStore({ stateDir: join(readDir, "store") });
readStore
  .openTranscript(AGENT, "read", { header: header("read") })
  .appendMany(Array.from({ length: ENTRIES }, (_u, i) => entry(i)));
// A branched 10k-entry session: five attempts of 2,000 entries, each branching from the first entry (as
// navigateTree / regenerate do); the active branch is the last attempt.
const BRANCH_LENGTH = 2_000;
const piBranched = SessionManager.create("/work", join(readDir, "pi-branched"));
const branched: TranscriptEntry[] = [];
for (let index = 0; index < ENTRIES; index++) {
  if (index > 1 && (index - 1) % BRANCH_LENGTH === 0) piBranched.branch(piBranched.getEntries()[0]?.id ?? "");
  piBranched.appendMessage(message(index));
}
for (const piEntry of piBranched.getEntries()) branched.push(piEntry as unknown as TranscriptEntry);
const piBranchedFile = piBranched.getSessionFile() ?? "";
const branchedTranscript = readStore.openTranscript(AGENT, "branched", { header: header("branched") });
branchedTranscript.appendMany(branched);
branchedTranscript.setLeaf(piBranched.getLeafId());
if (branchedTranscript.getBranch().length !== piBranched.getBranch().length)
  throw new Error("branched fixtures differ");
process.once("exit", () => rmSync(readDir, { recursive: true, force: true }));

export default [
  defineSuite({
    name: `append ${ENTRIES} transcript entries one by one`,
    baseline: "pi JSONL SessionManager.appendMessage (appendFileSync, no fsync)",
    iterations: 9,
    warmup: 1,
    itemsPerIteration: ENTRIES,
    cases: [
      {
        name: "pi JSONL SessionManager.appendMessage (appendFileSync, no fsync)",
        before: () => mkdtempSync(join(tmpdir(), "bench-pi-")),
        run: (dir: string) => {
          const manager = SessionManager.create("/work", dir);
          for (let index = 0; index < ENTRIES; index++) manager.appendMessage(message(index));
        },
        after: (dir: string) => rmSync(dir, { recursive: true, force: true }),
      },
      {
        name: "floor: appendFileSync of the same entry's JSON line (no pi, no fsync)",
        before: () => mkdtempSync(join(tmpdir(), "bench-raw-")),
        run: (dir: string) => {
          const file = join(dir, "raw.jsonl");
          writeFileSync(file, "");
          for (let index = 0; index < ENTRIES; index++)
            appendFileSync(file, `${JSON.stringify(entry(index))}\n`);
        },
        after: (dir: string) => rmSync(dir, { recursive: true, force: true }),
      },
      ...appendCases,
      {
        // A loop that never yields never lets the background checkpoint run: only the 64 MB backstop does.
        name: `store append ×${ENTRIES} (durability normal, appends "commit", SQLite's checkpoint on commit every 4 MB)`,
        before: () => freshStore("normal", "on-commit", "commit"),
        run: appendAll,
        after: dropStore,
      },
      {
        // Each parent is the entry before the last one (two interleaved chains), which this process has
        // neither just appended nor read: every insert checks its parent in SQL, as the first append of a
        // process to a session it never read does.
        name: `explains: store append ×${ENTRIES} (durability normal, appends "commit"), every parent checked in SQL`,
        before: () => freshStore("normal", undefined, "commit"),
        run: (state: StoreState) =>
          appendAll(state, (index) => {
            const { parentId: _chain, ...rest } = entry(index);
            return { ...rest, parentId: index < 2 ? null : entry(index - 2).id };
          }),
        after: dropStore,
      },
      {
        name: `store appendMany ×${ENTRIES} (one transaction, WAL)`,
        before: () => freshStore("normal"),
        run: (state: StoreState) => {
          const transcript = state.store.openTranscript(AGENT, "s", { header: header("s") });
          transcript.appendMany(Array.from({ length: ENTRIES }, (_u, i) => entry(i)));
        },
        after: dropStore,
      },
      fsyncCase,
    ],
  }),
  defineSuite({
    name: `read the active branch (${BRANCH_LENGTH + 1} entries) of a ${ENTRIES}-entry session with 5 branches`,
    baseline: "pi SessionManager.open + buildSessionContext",
    iterations: 15,
    warmup: 3,
    cases: [
      {
        name: "pi SessionManager.open + buildSessionContext",
        run: () => SessionManager.open(piBranchedFile).buildSessionContext(),
      },
      {
        name: "pi SessionManager.open + getBranch",
        run: () => SessionManager.open(piBranchedFile).getBranch(),
      },
      {
        name: "store openTranscript + getBranch, cold (cache cleared, store open)",
        before: clearTranscriptCache,
        run: () => readStore.openTranscript(AGENT, "branched").getBranch(),
      },
      {
        name: "store openTranscript + getBranch, warm (entries cached in this process)",
        run: () => readStore.openTranscript(AGENT, "branched").getBranch(),
      },
    ],
  }),
  defineSuite({
    name: `read the active branch of a linear ${ENTRIES}-entry session`,
    baseline: "pi SessionManager.open + buildSessionContext",
    iterations: 15,
    warmup: 3,
    itemsPerIteration: ENTRIES,
    cases: [
      {
        name: "pi SessionManager.open + buildSessionContext",
        run: () => SessionManager.open(piFile).buildSessionContext(),
      },
      {
        name: "pi SessionManager.open + getBranch",
        run: () => SessionManager.open(piFile).getBranch(),
      },
      {
        name: "floor: readFileSync + split + JSON.parse of every line (no tree, no pi)",
        run: () => {
          for (const line of readFileSync(piFile, "utf8").split("\n")) if (line !== "") JSON.parse(line);
        },
      },
      {
        name: `explains: JSON.parse of the store's ${ENTRIES} entry bodies (strings already in memory, no SQLite)`,
        run: () => {
          for (const body of storedBodies) JSON.parse(body);
        },
      },
      {
        name: "store openTranscript + getBranch, cold (cache cleared, store open)",
        before: clearTranscriptCache,
        run: () => readStore.openTranscript(AGENT, "read").getBranch(),
      },
      {
        name: "explains: the kernel's cold path: store getEntries + pi SessionManager.inMemory + buildSessionContext",
        before: clearTranscriptCache,
        run: () => {
          const transcript = readStore.openTranscript(AGENT, "read");
          const fileEntries = [header("read"), ...transcript.getEntries()] as unknown as FileEntry[];
          SessionManager.inMemory("/work", undefined, fileEntries).buildSessionContext();
        },
      },
      {
        name: "store open + openTranscript + getBranch + close, cold (cache cleared)",
        before: clearTranscriptCache,
        run: async () => {
          const store = await openSessionStore({ stateDir: join(readDir, "store") });
          store.openTranscript(AGENT, "read").getBranch();
          await store.close();
        },
      },
      {
        name: "store openTranscript + getBranch, warm (entries cached in this process)",
        run: () => readStore.openTranscript(AGENT, "read").getBranch(),
      },
      {
        name: "store open + openTranscript + getBranch + close, warm (entries cached in this process)",
        run: async () => {
          const store = await openSessionStore({ stateDir: join(readDir, "store") });
          store.openTranscript(AGENT, "read").getBranch();
          await store.close();
        },
      },
      {
        name: "pi SessionManager.inMemory(store getEntries) + buildSessionContext, warm (the adapter's path)",
        run: () => {
          const transcript = readStore.openTranscript(AGENT, "read");
          const fileEntries = [header("read"), ...transcript.getEntries()] as unknown as FileEntry[];
          SessionManager.inMemory("/work", undefined, fileEntries).buildSessionContext();
        },
      },
    ],
  }),
];

// The long-session fixture of first-text.bench.ts: the same 10k conversation entries in the agent's SQLite
// store (its main session, made by one real `agent -m` turn, then the entries appended after that turn's
// leaf) and in a pi JSONL session file. Built once, untimed; each timed turn gets a copy (copyStateDir,
// copySessionFile), so every iteration starts from the same 10k entries.
// Owns only building and copying the fixture; not the timing (first-text.bench.ts) or the turns themselves.
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openKernelStore } from "@agent-kernel/kernel";

/** How many conversation entries the long session holds (besides the seeding turn's in the store). */
export const LONG_SESSION_ENTRIES = 10_000;
const AGENT_ID = "main";
const START = 1_767_225_600_000;

/** A conversation as pi writes it: alternating user and assistant messages of a few hundred bytes each. */
function message(index: number) {
  const text = `message ${index}: ${"lorem ipsum dolor sit amet ".repeat(8)}`;
  return index % 2 === 0
    ? { role: "user" as const, content: [{ type: "text" as const, text }], timestamp: START + index }
    : {
        role: "assistant" as const,
        content: [{ type: "text" as const, text }],
        api: "openai-completions",
        provider: "scripted",
        model: "m1",
        usage: {
          input: 10,
          output: 20,
          cacheRead: 0,
          cacheWrite: 0,
          totalTokens: 30,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
        },
        stopReason: "stop" as const,
        timestamp: START + index,
      };
}

/** Entry ids of their own ("b" + 7 hex digits), so they never meet the seeding turn's random ids. */
const entryId = (index: number): string => `b${index.toString(16).padStart(7, "0")}`;

function entries(firstParent: string | null) {
  return Array.from({ length: LONG_SESSION_ENTRIES }, (_, index) => ({
    type: "message" as const,
    id: entryId(index),
    parentId: index === 0 ? firstParent : entryId(index - 1),
    timestamp: new Date(START + index).toISOString(),
    message: message(index),
  }));
}

/**
 * Appends the entries to the agent's main session in `stateDir` (which one real turn made), after its leaf.
 * Throws unless the state dir holds exactly that one session.
 */
export async function fillAgentSession(stateDir: string): Promise<void> {
  const store = await openKernelStore({ stateDir });
  try {
    const sessions = await store.sessions.list(AGENT_ID);
    const session = sessions[0];
    if (sessions.length !== 1 || session === undefined)
      throw new Error(`the fixture's state dir holds ${sessions.length} sessions of "${AGENT_ID}", not one`);
    const transcript = store.openTranscript(AGENT_ID, session.sessionId);
    transcript.appendMany(entries(transcript.getLeafId()));
    await store.flush();
  } finally {
    await store.close();
  }
}

/** Writes the same entries as a pi session file (version 3 header, then one JSON line per entry). */
export function writePiSessionFile(file: string, cwd: string): void {
  const header = {
    type: "session",
    version: 3,
    id: "bench-long-session",
    timestamp: new Date(START - 1).toISOString(),
    cwd,
  };
  const lines = [header, ...entries(null)].map((line) => JSON.stringify(line));
  writeFileSync(file, `${lines.join("\n")}\n`);
}

/** A copy of the fixture's state dir at `to` (the store is closed: nothing is in flight). */
export function copyStateDir(from: string, to: string): void {
  cpSync(from, to, { recursive: true });
}

/** A copy of the pi session file in a fresh directory `dir`; returns the copy's path. */
export function copySessionFile(from: string, dir: string): string {
  mkdirSync(dir, { recursive: true });
  const to = join(dir, "session.jsonl");
  cpSync(from, to);
  return to;
}

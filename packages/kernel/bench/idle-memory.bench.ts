// What a session holds between turns: heap per idle session, the kernel against pi's own AgentSession.
//
// Kernel: 150 sessions, each answered twice through `prepareSession` + `executeTurn` (pi's faux provider, a real
// SQLite store), then left idle — what stays is what an idle session costs a gateway: the warm AgentSession
// the executor keeps for its next turn, the session-manager binding, the preparation and the transcript
// read cache. Before that, 64 other sessions × 4 turns fill what is bounded per kernel rather than per
// session (the 256 recently ended runs `wait` answers for), so that it is not charged to the idle sessions.
// Both stay under the executor's 256 warm bindings per store, so every idle session is warm.
//
// pi (the baseline): 150 AgentSessions from `createAgentSession`, each prompted twice and kept, as an embedder
// that holds its sessions would — in-memory SessionManager, the same tools and the same system prompt text the
// kernel gives each session (built by the kernel's `buildKernelSystemPrompt` for that session): an AgentSession
// records its system prompt and tools in its session, so the prompt's size is in both figures alike. The
// reference row gives pi a one-line prompt (what a bare script would hold).
//
// Each figure, in a process of its own (idle-memory-child.ts): heap used after a full GC once the sessions went
// idle (100 ms later, so that timers and immediates of the last turns ran), minus the same before, divided by
// 150, in KiB.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { defineSuite } from "@agent-kernel/bench";

/** Each figure comes from a process of its own (see idle-memory-child.ts). */
const SESSIONS = 150;
const TURNS = 2;
const ITERATIONS = 3;
const CHILD = new URL("./idle-memory-child.ts", import.meta.url).pathname;

async function measureInChild(mode: "kernel" | "pi" | "pi-short"): Promise<number> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--expose-gc", "--conditions=@agent-kernel/source", CHILD, mode],
    { maxBuffer: 1024 * 1024 },
  );
  const last = stdout.trim().split("\n").at(-1) ?? "";
  const { kib } = JSON.parse(last) as { kib: number };
  return kib;
}

function childCase(
  name: string,
  mode: "kernel" | "pi" | "pi-short",
  target?: { minSpeedup: number; label: string },
) {
  let figure = Number.NaN;
  return {
    name,
    ...(target === undefined ? {} : { target }),
    run: async () => {
      figure = await measureInChild(mode);
    },
    measure: () => figure,
  };
}

const PI = "pi AgentSession kept after 2 prompts: same tools, the kernel's system prompt";

export default defineSuite({
  name: `heap per idle session (${SESSIONS} sessions, ${TURNS} turns each, pi faux provider)`,
  baseline: PI,
  unit: "KiB/session",
  iterations: ITERATIONS,
  warmup: 0,
  cases: [
    childCase(PI, "pi"),
    childCase(
      "kernel: session idle after 2 turns (warm AgentSession, binding, preparation, read cache)",
      "kernel",
      { minSpeedup: 0.5, label: "heap per idle session ≤ 2× pi's AgentSession" },
    ),
    childCase(
      "pi AgentSession kept after 2 prompts: same tools, a one-line system prompt (reference)",
      "pi-short",
    ),
  ],
});

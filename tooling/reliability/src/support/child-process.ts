// A child process the reliability suite drives line by line: Node 22 with the source condition running one of
// this package's .ts scripts, its stdout read as lines, killed with SIGKILL when the test says so. Owns the
// process plumbing only; what the lines mean is the calling test's.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";

export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

export interface LineChild {
  readonly pid: number | undefined;
  /** Every complete stdout line so far (a live array). */
  readonly lines: readonly string[];
  readonly exited: Promise<ChildExit>;
  /** Resolves with the index of the first line (from `from`) that satisfies `test`, or -1 once the child exited. */
  waitFor(test: (line: string) => boolean, from?: number): Promise<number>;
  send(line: string): void;
  kill(): void;
}

/** Node's compile cache for the children (V8 code of pi and its dependencies), shared by every child of a run. */
export function compileCacheEnv(dir: string): NodeJS.ProcessEnv {
  return { ...process.env, NODE_COMPILE_CACHE: dir };
}

export function startLineChild(script: string, args: readonly string[], env?: NodeJS.ProcessEnv): LineChild {
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    ["--conditions=@agent-kernel/source", script, ...args],
    { stdio: ["pipe", "pipe", "pipe"], ...(env === undefined ? {} : { env }) },
  );
  const lines: string[] = [];
  let partial = "";
  let stderr = "";
  let done = false;
  const waiters: { test: (line: string) => boolean; from: number; resolve: (index: number) => void }[] = [];
  const settle = () => {
    for (const waiter of [...waiters]) {
      const index = lines.findIndex((line, at) => at >= waiter.from && waiter.test(line));
      if (index >= 0 || done) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(index);
      }
    }
  };
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    const parts = (partial + chunk).split("\n");
    partial = parts.pop() ?? "";
    lines.push(...parts);
    settle();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  // An order written to a child that was killed meanwhile must not crash the test process.
  child.stdin.on("error", () => {});
  const exited = new Promise<ChildExit>((resolve) => {
    child.on("close", (code, signal) => {
      done = true;
      settle();
      resolve({ code, signal, stderr });
    });
  });
  return {
    pid: child.pid,
    lines,
    exited,
    waitFor: (test, from = 0) =>
      new Promise<number>((resolve) => {
        waiters.push({ test, from, resolve });
        settle();
      }),
    send: (line) => {
      child.stdin.write(`${line}\n`);
    },
    kill: () => {
      child.kill("SIGKILL");
    },
  };
}

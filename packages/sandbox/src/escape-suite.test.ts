// The escape suite: every way out we know of, tried against the real `bwrap` engine, each of which must
// fail; then the same attempts on the `host` engine, to pin down what an unsandboxed session still allows
// (docs/security.md lists the same table). Owns: the attempts and their expected outcomes. Runs real
// processes: bubblewrap must be installed (the test command installs it).
import { execFileSync } from "node:child_process";
import {
  chownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBwrapEngine } from "./bwrap-engine.ts";
import { scrubEnvironment } from "./environment.ts";
import { createHostEngine } from "./host-engine.ts";
import { SANDBOX_HOST_ID, SANDBOX_WORKSPACE_PATH } from "./layout.ts";
import type { SandboxEngine, SandboxLimits, SandboxMount, SandboxResult } from "./types.ts";

const CANARY = `sk-canary-${process.pid}-7f3a9c2e`;
const LIMITS: SandboxLimits = {
  timeoutMs: 20_000,
  maxOutputBytes: 256 * 1024,
  memoryBytes: 256 * 1024 * 1024,
  maxProcesses: 64,
  maxFileBytes: 4 * 1024 * 1024,
  tmpBytes: 16 * 1024 * 1024,
};

let root: string;
let workspace: string;
let stateDir: string;
let configFile: string;
let server: Server;
let port: number;
let connections = 0;

interface Run {
  readonly result: SandboxResult;
  readonly output: string;
}

async function run(
  engine: SandboxEngine,
  command: string,
  options: { limits?: Partial<SandboxLimits>; network?: boolean; mounts?: SandboxMount[] } = {},
): Promise<Run> {
  let output = "";
  const mounts = options.mounts ?? [{ path: SANDBOX_WORKSPACE_PATH, hostPath: workspace, writable: true }];
  const result = await engine.run({
    command,
    cwd: engine.name === "host" ? workspace : SANDBOX_WORKSPACE_PATH,
    env: scrubEnvironment(
      { ...process.env, AGENT_KERNEL_TEST_KEY: CANARY },
      { allow: ["PATH", "HOME", "LANG"] },
    ),
    mounts: engine.name === "host" ? [{ path: workspace, hostPath: workspace, writable: true }] : mounts,
    network: options.network ?? false,
    limits: { ...LIMITS, ...options.limits },
    onData: (chunk) => {
      output += chunk.toString("utf8");
    },
  });
  return { result, output };
}

const succeeded = (attempt: Run) => attempt.result.exitCode === 0;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "sandbox-escape-"));
  workspace = join(root, "workspace");
  stateDir = join(root, "state");
  mkdirSync(workspace);
  mkdirSync(stateDir);
  configFile = join(stateDir, "config.json5");
  writeFileSync(configFile, `{ auth: { profiles: { a: { apiKey: "${CANARY}" } } } }`);
  writeFileSync(join(stateDir, "agent.sqlite"), `not really a database ${CANARY}`);
  // The sandbox runs as its working directory's owner, never root (a root gateway gives the scope's sandbox
  // workspace to nobody, as the kernel does).
  if (process.getuid?.() === 0) chownSync(workspace, SANDBOX_HOST_ID, SANDBOX_HOST_ID);
  writeFileSync(join(workspace, "inside.txt"), "inside\n");
  writeFileSync(join(workspace, "..foo"), "a file named ..foo\n");
  // Links a model (or a file it was sent) could plant in the workspace.
  symlinkSync(configFile, join(workspace, "config-link"));
  symlinkSync(stateDir, join(workspace, "state-link"));
  symlinkSync(join(stateDir, "planted.txt"), join(workspace, "dangling-link"));
  symlinkSync("/etc/shadow", join(workspace, "shadow-link"));
  server = createServer((socket) => {
    connections++;
    socket.end("hello from the host\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  port = typeof address === "object" && address !== null ? address.port : 0;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(root, { recursive: true, force: true });
});

/** One escape attempt: run on each engine, judged by `escaped` (true: the command got out). */
interface Attempt {
  readonly name: string;
  readonly command: () => string;
  readonly escaped: (attempt: Run) => boolean;
  /** What an unsandboxed session gets: "allowed" (it escapes), "blocked", or "not run" (would harm the host). */
  readonly host: "allowed" | "blocked" | "not run";
}

const ATTEMPTS: readonly Attempt[] = [
  {
    name: "climb out with ..",
    command: () => `cat ../../../..${configFile}`,
    escaped: (attempt) => attempt.output.includes(CANARY),
    host: "allowed",
  },
  {
    name: "read the config file by absolute path",
    command: () => `cat ${configFile}`,
    escaped: (attempt) => attempt.output.includes(CANARY),
    host: "allowed",
  },
  {
    name: "read the state dir",
    command: () => `ls ${stateDir} && cat ${stateDir}/agent.sqlite`,
    escaped: (attempt) => attempt.output.includes(CANARY),
    host: "allowed",
  },
  {
    name: "follow a symlink to the config file",
    command: () => "cat config-link",
    escaped: (attempt) => attempt.output.includes(CANARY),
    host: "allowed",
  },
  {
    name: "follow a symlink to the state dir",
    command: () => "cat state-link/agent.sqlite",
    escaped: (attempt) => attempt.output.includes(CANARY),
    host: "allowed",
  },
  {
    name: "write through a dangling symlink",
    command: () => "echo planted > dangling-link",
    escaped: () => readdirSync(stateDir).includes("planted.txt"),
    host: "allowed",
  },
  {
    name: "plant a symlink to the host and read it",
    command: () => `ln -sf ${configFile} own-link && cat own-link`,
    escaped: (attempt) => attempt.output.includes(CANARY),
    host: "allowed",
  },
  {
    name: "read /etc/shadow through a link",
    command: () => "cat shadow-link",
    escaped: succeeded,
    host: "allowed",
  },
  {
    name: "write outside the workspace",
    command: () => `echo x > ${stateDir}/written.txt; echo x > /written.txt; echo x > /usr/written.txt`,
    escaped: () => readdirSync(stateDir).includes("written.txt"),
    host: "allowed",
  },
  {
    name: "the key in env",
    command: () => "env",
    escaped: (attempt) => attempt.output.includes(CANARY),
    host: "blocked",
  },
  {
    name: "the key in /proc/self/environ",
    command: () => "tr '\\0' '\\n' < /proc/self/environ",
    escaped: (attempt) => attempt.output.includes(CANARY),
    host: "blocked",
  },
  {
    name: "the gateway's environment through /proc",
    command: () => `tr '\\0' '\\n' < /proc/${process.pid}/environ`,
    // The test process runs without the canary in its own environment, so what counts is reaching it at all.
    escaped: succeeded,
    host: "allowed",
  },
  {
    name: "write a kernel setting (core_pattern runs a program as root)",
    command: () =>
      `cp /proc/sys/kernel/core_pattern ${workspace}-pattern 2>/dev/null; echo '|/bin/true' > /proc/sys/kernel/core_pattern && echo WROTE`,
    escaped: (attempt) => attempt.output.includes("WROTE"),
    host: "not run",
  },
  {
    name: "a user namespace of its own (root inside it)",
    command: () => "unshare -Ur id -u",
    escaped: (attempt) => succeeded(attempt) && /^0$/m.test(attempt.output),
    host: "not run",
  },
  {
    name: "the gateway's session keyring (keyctl)",
    command: () =>
      `perl -e 'print syscall(${process.arch === "arm64" ? 219 : 250}, 0, 0) == -1 ? "refused: $!\\n" : "ALLOWED\\n"'`,
    escaped: (attempt) => attempt.output.includes("ALLOWED"),
    host: "not run",
  },
  {
    name: "a pty from the host's pool",
    command: () => "exec 3<>/dev/ptmx && echo OPENED",
    escaped: (attempt) => attempt.output.includes("OPENED"),
    host: "not run",
  },
  {
    name: "connect to a loopback server with network off",
    command: () => `exec 3<>/dev/tcp/127.0.0.1/${port} && head -c 100 <&3`,
    escaped: (attempt) => attempt.output.includes("hello from the host"),
    host: "allowed",
  },
];

describe.each([
  ["bwrap", () => createBwrapEngine()],
  ["host", () => createHostEngine()],
] as const)("escape attempts on the %s engine", (engineName, makeEngine) => {
  const engine = makeEngine();
  for (const attempt of ATTEMPTS) {
    const expected = engineName === "bwrap" ? "blocked" : attempt.host;
    it.skipIf(expected === "not run")(`${attempt.name}: ${expected}`, async () => {
      rmSync(join(stateDir, "planted.txt"), { force: true });
      rmSync(join(stateDir, "written.txt"), { force: true });
      const outcome = await run(engine, attempt.command());
      expect(attempt.escaped(outcome) ? "allowed" : "blocked", outcome.output).toBe(expected);
    });
  }
});

describe("the bwrap engine's containment", () => {
  const engine = createBwrapEngine();

  it("starts (bubblewrap installed and user namespaces allowed)", async () => {
    const status = await engine.probe({ fresh: true });
    expect(status).toMatchObject({ available: true, engine: "bwrap" });
  });

  it("runs unprivileged: no capabilities, no new privileges, not root", async () => {
    const { output, result } = await run(
      engine,
      "id -u; grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status",
    );
    expect(result.exitCode).toBe(0);
    expect(output).toMatch(/^1000\n/);
    expect(output).toMatch(/CapEff:\s+0+\n/);
    expect(output).toMatch(/CapBnd:\s+0+\n/);
    expect(output).toMatch(/NoNewPrivs:\s+1/);
  });

  it("sees only its own processes and no host directories", async () => {
    const { output } = await run(
      engine,
      "ls /proc | grep -c '^[0-9]'; ls /; ls /home /root /work 2>&1 | head -3",
    );
    const [processes] = output.split("\n");
    expect(Number(processes)).toBeLessThan(10);
    expect(output).not.toMatch(/^(home|root|work|var|opt|srv|mnt|sys)$/m);
  });

  it("reads and writes the workspace, and a file named ..foo in it", async () => {
    const { output, result } = await run(engine, "cat inside.txt ..foo && echo made > made.txt");
    expect(result.exitCode).toBe(0);
    expect(output).toContain("a file named ..foo");
    expect(readFileSync(join(workspace, "made.txt"), "utf8")).toBe("made\n");
  });

  it("cannot write a read-only mount", async () => {
    const readOnly = join(root, "read-only");
    mkdirSync(readOnly, { recursive: true });
    const { result } = await run(engine, "echo x > /agent/new.txt", {
      mounts: [
        { path: SANDBOX_WORKSPACE_PATH, hostPath: workspace, writable: true },
        { path: "/agent", hostPath: readOnly, writable: false },
      ],
    });
    expect(result.exitCode).not.toBe(0);
    expect(readdirSync(readOnly)).toEqual([]);
  });

  it("reaches a loopback server when network is on (the setting works)", async () => {
    const before = connections;
    const { output } = await run(engine, `exec 3<>/dev/tcp/127.0.0.1/${port} && head -c 100 <&3`, {
      network: true,
    });
    expect(output).toContain("hello from the host");
    expect(connections).toBe(before + 1);
  });

  it("kills a command at its wall time, with every process it started", async () => {
    const marker = `sandbox-sleeper-${process.pid}`;
    const started = Date.now();
    const { result } = await run(engine, `(exec -a ${marker} sleep 300) & (exec -a ${marker} sleep 300)`, {
      limits: { timeoutMs: 1_000 },
    });
    expect(result.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(15_000);
    const left = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" })
      .split("\n")
      .filter((line) => line.startsWith(marker));
    expect(left).toEqual([]);
  });

  it("bounds a fork bomb to its process limit", async () => {
    // Counted from inside (the sandbox's /proc holds exactly its own processes) by a loop of shell builtins
    // only, so the count needs no fork while the bomb holds every slot; the machine's other processes (a busy
    // test run) do not disturb it. It watches for at least 3 s, and up to 12 s while the bomb has not yet
    // filled half its slots: on a machine loaded far beyond its cores the bomb's forks come slowly.
    const started = Date.now();
    const { output } = await run(
      engine,
      "bomb() { bomb | bomb & }; bomb; max=0; start=$SECONDS; end=$((SECONDS + 12)); while ((SECONDS < end && (max <= 16 || SECONDS < start + 3))); do p=(/proc/[0-9]*); ((${#p[@]} > max)) && max=${#p[@]}; done; echo peak=$max",
      { limits: { timeoutMs: 20_000, maxProcesses: 32 } },
    );
    expect(Date.now() - started).toBeLessThan(30_000);
    const peak = Number(/peak=(\d+)/.exec(output)?.[1]);
    // The bomb filled its 32 slots (plus bwrap's own init, outside the group) and never got past them. One scan
    // of /proc is not a snapshot: a process that exits after the scan passed it and one forked into its slot
    // later are both counted, so a churning bomb reads a few over its live count (37 seen once in ~30 runs at
    // load 9), while a bomb with no limit would pass 42 many times over.
    expect(peak).toBeGreaterThan(16);
    expect(peak).toBeLessThanOrEqual(32 + 2 + 8);
  });

  it("bounds a memory hog", async () => {
    const { result, output } = await run(
      engine,
      "awk 'BEGIN { s = \"x\"; while (length(s) < 2000000000) s = s s; print length(s) }'",
      { limits: { memoryBytes: 128 * 1024 * 1024 } },
    );
    expect(result.timedOut).toBe(false);
    expect(result.exitCode).not.toBe(0);
    expect(output).not.toMatch(/^2\d{9}/m);
  });

  it("bounds what a command holds in memory-backed files, where a memory cgroup is available", async () => {
    const status = await engine.probe();
    if (!status.available || status.memoryLimit !== "cgroup") return;
    // /tmp would take 400 MB, but the command may hold 96 MB altogether.
    const { result } = await run(engine, "head -c 300000000 /dev/zero > /tmp/big; echo wrote $?", {
      limits: { tmpBytes: 400 * 1024 * 1024, memoryBytes: 96 * 1024 * 1024, maxFileBytes: 400 * 1024 * 1024 },
    });
    expect(result.exitCode === 0 && !result.signal).toBe(false);
  });

  it("lets no start-up variable run code before the command (BASH_ENV, LD_PRELOAD, exported functions)", async () => {
    writeFileSync(join(workspace, "startup.sh"), "touch /workspace/ran-at-startup\n");
    const result = await engine.run({
      command: "echo ok",
      cwd: SANDBOX_WORKSPACE_PATH,
      env: {
        BASH_ENV: "/workspace/startup.sh",
        ENV: "/workspace/startup.sh",
        LD_PRELOAD: "/workspace/nothing.so",
        "BASH_FUNC_echo%%": "() { touch /workspace/ran-at-startup; }",
      },
      mounts: [{ path: SANDBOX_WORKSPACE_PATH, hostPath: workspace, writable: true }],
      network: false,
      limits: LIMITS,
    });
    expect(result.exitCode).toBe(0);
    expect(readdirSync(workspace)).not.toContain("ran-at-startup");
  });

  it("bounds shared memory like /tmp", async () => {
    const { result } = await run(engine, "head -c 40000000 /dev/zero > /dev/shm/big", {
      limits: { tmpBytes: 16 * 1024 * 1024, maxFileBytes: 100 * 1024 * 1024 },
    });
    expect(result.exitCode).not.toBe(0);
  });

  it.runIf(process.getuid?.() === 0)("runs as nobody on the host when the gateway is root", async () => {
    const { output } = await run(engine, "cat /proc/self/uid_map; touch owned-by-sandbox");
    expect(output).toMatch(new RegExp(`^\\s*1000\\s+${SANDBOX_HOST_ID}\\s+1$`, "m"));
    expect(statSync(join(workspace, "owned-by-sandbox")).uid).toBe(SANDBOX_HOST_ID);
  });

  it.runIf(process.getuid?.() === 0)(
    "refuses to run as root when its working directory belongs to root",
    async () => {
      const rootOwned = join(root, "root-owned");
      mkdirSync(rootOwned, { recursive: true });
      await expect(
        run(engine, "touch x", {
          mounts: [{ path: SANDBOX_WORKSPACE_PATH, hostPath: rootOwned, writable: true }],
        }),
      ).rejects.toThrow(/belongs to root, so its commands would run as root on the host/);
      expect(readdirSync(rootOwned)).toEqual([]);
    },
  );

  it("bounds the size of a file it writes", async () => {
    const { result } = await run(engine, "head -c 20000000 /dev/zero > big.bin", {
      limits: { maxFileBytes: 1024 * 1024 },
    });
    expect(result.exitCode).not.toBe(0);
    expect(readFileSync(join(workspace, "big.bin")).length).toBeLessThanOrEqual(1024 * 1024);
    rmSync(join(workspace, "big.bin"));
  });

  it("kills a command whose output passes the limit", async () => {
    let seen = 0;
    const result = await engine.run({
      command: "yes",
      cwd: SANDBOX_WORKSPACE_PATH,
      env: {},
      mounts: [{ path: SANDBOX_WORKSPACE_PATH, hostPath: workspace, writable: true }],
      network: false,
      limits: { ...LIMITS, maxOutputBytes: 10_000 },
      onData: (chunk) => {
        seen += chunk.length;
      },
    });
    expect(result.outputLimited).toBe(true);
    expect(seen).toBe(10_000);
    expect(result.timedOut).toBe(false);
  });

  it("stops at once when the caller aborts", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const result = await engine.run({
      command: "sleep 60",
      cwd: SANDBOX_WORKSPACE_PATH,
      env: {},
      mounts: [{ path: SANDBOX_WORKSPACE_PATH, hostPath: workspace, writable: true }],
      network: false,
      limits: LIMITS,
      signal: controller.signal,
    });
    expect(result.aborted).toBe(true);
    expect(result.durationMs).toBeLessThan(10_000);
  });
});

describe("sandboxes started ahead (standbys)", () => {
  const engine = createBwrapEngine();

  it("give every command a fresh sandbox: nothing of the last command's /tmp or processes is left", async () => {
    const marker = `sandbox-leftover-${process.pid}`;
    const first = await run(
      engine,
      `echo secret > /tmp/left.txt; (exec -a ${marker} sleep 300) & echo started`,
    );
    expect(first.output).toContain("started");
    // The second command runs on the standby started while the first ran.
    const second = await run(engine, `cat /tmp/left.txt 2>&1; ps -eo args | grep -c ${marker} || true`);
    expect(second.output).not.toContain("secret");
    expect(second.output).toMatch(/No such file/);
    const onHost = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" })
      .split("\n")
      .filter((line) => line.startsWith(marker));
    expect(onHost).toEqual([]);
  });

  it("do not keep a finished program alive", async () => {
    const script = join(root, "one-command.ts");
    writeFileSync(
      script,
      `import { createBwrapEngine } from ${JSON.stringify(join(import.meta.dirname, "index.ts"))};
const engine = createBwrapEngine();
const result = await engine.run({ command: "echo hi", cwd: "/workspace", env: {}, network: false,
  mounts: [{ path: "/workspace", hostPath: ${JSON.stringify(workspace)}, writable: true }],
  limits: ${JSON.stringify(LIMITS)} });
console.log("exit", result.exitCode);
`,
    );
    const started = Date.now();
    const output = execFileSync(process.execPath, [script], { encoding: "utf8", timeout: 30_000 });
    expect(output).toContain("exit 0");
    // A standby waits up to a minute for a next command; it must not hold the program that long.
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});

describe("the process limit's enforcement", () => {
  it.runIf(process.getuid?.() === 0)(
    "as root without a pids cgroup it is reported as not enforced (root ignores RLIMIT_NPROC)",
    async () => {
      const status = await createBwrapEngine({ pidsCgroup: false }).probe();
      expect(status).toMatchObject({ available: true, processLimit: "none" });
      if (status.available) expect(status.warnings.join("\n")).toMatch(/process limit is not enforced/);
    },
  );
});

describe("an engine that cannot start", () => {
  it("reports what is missing and how to fix it, and runs nothing", async () => {
    const engine = createBwrapEngine({ bwrapPath: join(tmpdir(), "no-such-bwrap") });
    const status = await engine.probe();
    expect(status.available).toBe(false);
    if (!status.available) expect(status.fix).toContain("apt-get install bubblewrap");
    await expect(
      engine.run({
        command: "touch should-not-exist",
        cwd: SANDBOX_WORKSPACE_PATH,
        env: {},
        mounts: [{ path: SANDBOX_WORKSPACE_PATH, hostPath: workspace, writable: true }],
        network: false,
        limits: LIMITS,
      }),
    ).rejects.toThrow(/sandbox engine "bwrap" is unavailable: .*no-such-bwrap does not exist/);
    expect(readdirSync(workspace)).not.toContain("should-not-exist");
  });
});

// The bubblewrap engine (`bwrap`, the engine Flatpak uses): each command in fresh user, pid, ipc, uts, cgroup
// and (unless network is on) network namespaces, with no capabilities, as an unprivileged uid. Only the
// system directories (read-only), the command's mounts, a private /proc, /dev and /tmp exist inside: no host
// /proc, home, state dir or config. Limits: rlimits set before the command runs (memory, file size,
// processes), a pids cgroup per command when the gateway runs as root (root ignores RLIMIT_NPROC), wall time,
// output. Owns: probing that bwrap works here, running, and keeping one sandbox
// started ahead for each recent set of settings (a standby: namespaces, mounts, limits and cgroup all set
// up, its shell waiting to read a command), so a session's next command does not wait for bwrap to start.
// A standby runs exactly one command, like a sandbox started for it. Does not own: which directories to
// mount (layout.ts), the environment (environment.ts) or the bwrap argv, passwd and the sandbox's user
// (bwrap-args.ts).
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { accessSync, chownSync, constants, existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import {
  bwrapArgs,
  GROUP,
  PASSWD,
  SANDBOX_UID,
  SECCOMP_FILTER,
  sandboxEnv,
  sandboxUserOfRootGateway,
} from "./bwrap-args.ts";
import { type CgroupController, findMemoryController, findPidsController } from "./command-cgroups.ts";
import { SANDBOX_HOST_ID } from "./layout.ts";
import { StartedProcess } from "./process-runner.ts";
import { Standbys, standbyKey } from "./standbys.ts";
import type {
  EngineStatus,
  ProcessLimitEnforcement,
  SandboxCommand,
  SandboxEngine,
  SandboxResult,
  SandboxSettings,
} from "./types.ts";
import { SandboxUnavailableError } from "./types.ts";

export { bwrapArgs, SANDBOX_PATH, SANDBOX_UID } from "./bwrap-args.ts";

const INSTALL_FIX =
  'install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`; Fedora: `dnf install bubblewrap`), or set the agent\'s sandbox.mode to "off" to run tools on the host';

/** Settings of the bubblewrap engine: the bwrap binary, cgroup use and standby sandboxes. */
export interface BwrapEngineOptions {
  /** The bwrap binary; default the first `bwrap` on PATH (the gateway's PATH, not the command's). */
  readonly bwrapPath?: string | undefined;
  /** Pids cgroups: "auto" (default) finds one; false never uses one (tests of the rlimit path). */
  readonly pidsCgroup?: "auto" | false | undefined;
  /** Memory cgroups: "auto" (default) finds one; false never uses one. */
  readonly memoryCgroup?: "auto" | false | undefined;
  /**
   * Start the next sandbox of the same settings while a command runs (default true). False: every command
   * waits for its own sandbox to start (the cold cost; benchmarks compare the two).
   */
  readonly standby?: boolean | undefined;
}

function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  for (const dir of ["/usr/bin", "/usr/local/bin", "/bin"]) {
    const candidate = join(dir, name);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** How long a probe's answer holds: a working engine stays working; a missing one may be installed any time. */
const PROBE_TTL_AVAILABLE_MS = 10 * 60_000;
const PROBE_TTL_UNAVAILABLE_MS = 5_000;
/** The bubblewrap engine: each command in fresh namespaces as an unprivileged uid, with only the system directories and its mounts visible, under rlimits and cgroups. */
export function createBwrapEngine(options: BwrapEngineOptions = {}): SandboxEngine {
  let cached: { at: number; status: EngineStatus } | undefined;
  let pids: CgroupController | undefined | null = null;
  const pidsController = (): CgroupController | undefined => {
    if (pids === null) pids = options.pidsCgroup === false ? undefined : findPidsController();
    return pids;
  };
  let memory: CgroupController | undefined | null = null;
  const memoryController = (): CgroupController | undefined => {
    if (memory === null) memory = options.memoryCgroup === false ? undefined : findMemoryController();
    return memory;
  };
  const processLimitHere = (): ProcessLimitEnforcement => {
    if (pidsController() !== undefined) return "cgroup";
    return process.getuid?.() === 0 ? "none" : "rlimit";
  };

  /** Starts a sandbox for `settings`, its shell waiting for a command on descriptor 7. */
  const start = (settings: SandboxSettings, bwrap: string): StartedProcess => {
    const processLimit = processLimitHere();
    const asRoot = process.getuid?.() === 0;
    const user = asRoot ? sandboxUserOfRootGateway(settings) : undefined;
    const args = bwrapArgs(settings, processLimit, asRoot);
    const controller = processLimit === "cgroup" ? pidsController() : undefined;
    const id = randomUUID();
    const groups = [
      controller?.create(id, settings.limits.maxProcesses),
      memoryController()?.create(id, settings.limits.memoryBytes),
    ].filter((group) => group !== undefined);
    const group = groups.length === 0 ? undefined : groups;
    // bwrap says its namespace child's pid (--info-fd) and waits before letting it set anything up
    // (--userns-block-fd: its uid map is ours to write; --block-fd: before the command), so the child is in
    // the command's cgroup before it starts any process, and under a root gateway its user namespace maps the
    // sandbox user to an ordinary host uid.
    const gated =
      user !== undefined
        ? ["--info-fd", "5", "--userns-block-fd", "6", ...args]
        : group !== undefined
          ? ["--info-fd", "5", "--block-fd", "6", ...args]
          : args;
    const onChild = async (pid: number): Promise<void> => {
      for (const each of groups) await writeFile(each.procsFile, String(pid));
      if (user !== undefined) {
        // The sandbox's root is host root only for bwrap's own setup (mounts need it to reach the private
        // state dir); the sandbox user is the working directory's owner.
        await writeFile(`/proc/${pid}/uid_map`, `0 0 1\n${SANDBOX_UID} ${user.uid} 1\n`);
        await writeFile(`/proc/${pid}/gid_map`, `0 0 1\n${SANDBOX_UID} ${user.gid} 1\n`);
      }
    };
    return new StartedProcess({
      file: bwrap,
      args: gated,
      cwd: "/",
      env: sandboxEnv(settings.env),
      // 3 passwd, 4 group, 5 info, 6 block, 7 the command, 8 the seccomp filter.
      dataFds: [PASSWD, GROUP, undefined, undefined, undefined, SECCOMP_FILTER],
      inputIndex: 4,
      kill: () => {
        for (const each of groups) each.dispose();
      },
      gate: gated === args ? undefined : { infoIndex: 2, blockIndex: 3, onChild },
    });
  };

  const standbys = new Standbys();
  const launch = async (command: SandboxCommand, bwrap: string): Promise<SandboxResult> => {
    const { command: text, signal, onData, onStdout, stdin, ...settings } = command;
    const key = standbyKey(settings);
    const standby = standbys.take(key);
    const started = standby ?? start(settings, bwrap);
    // The next command of these settings gets a sandbox started now, while this one runs.
    if (options.standby !== false) standbys.prepare(key, () => start(settings, bwrap));
    return started.run({
      input: text,
      timeoutMs: settings.limits.timeoutMs,
      maxOutputBytes: settings.limits.maxOutputBytes,
      signal,
      onData,
      onStdout,
      stdin,
    });
  };

  const probe = async (): Promise<EngineStatus> => {
    const bwrap = options.bwrapPath ?? findOnPath("bwrap");
    if (bwrap === undefined || !existsSync(bwrap)) {
      return {
        available: false,
        engine: "bwrap",
        problem: options.bwrapPath
          ? `${options.bwrapPath} does not exist`
          : "bwrap is not installed (not on PATH)",
        fix: INSTALL_FIX,
      };
    }
    const version = spawnSync(bwrap, ["--version"], { encoding: "utf8", timeout: 10_000 });
    if (version.status !== 0) {
      return {
        available: false,
        engine: "bwrap",
        problem: `${bwrap} --version failed: ${(version.stderr || version.error?.message || "").trim()}`,
        fix: INSTALL_FIX,
      };
    }
    // A real start: user namespaces may be disabled (sysctl, AppArmor) even where bwrap is installed.
    // An empty directory of the sandbox's own user (as a sandbox workspace is), removed afterwards.
    const tmp = mkdtempSync(join(tmpdir(), "sandbox-probe-"));
    if (process.getuid?.() === 0) chownSync(tmp, SANDBOX_HOST_ID, SANDBOX_HOST_ID);
    let trial: SandboxResult | undefined;
    let output = "";
    try {
      const trialSettings: SandboxSettings = {
        cwd: "/probe",
        env: {},
        mounts: [{ path: "/probe", hostPath: tmp, writable: false }],
        network: false,
        limits: {
          timeoutMs: 15_000,
          maxOutputBytes: 64 * 1024,
          memoryBytes: 256 * 1024 * 1024,
          maxProcesses: 16,
          maxFileBytes: 1024 * 1024,
          tmpBytes: 1024 * 1024,
        },
      };
      trial = await start(trialSettings, bwrap).run({
        input: "exit 0",
        timeoutMs: trialSettings.limits.timeoutMs,
        maxOutputBytes: trialSettings.limits.maxOutputBytes,
        onData: (chunk) => {
          output += chunk.toString("utf8");
        },
      });
    } catch (error) {
      output = error instanceof Error ? error.message : String(error);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    if (trial?.exitCode !== 0) {
      return {
        available: false,
        engine: "bwrap",
        problem: `${bwrap} cannot start a sandbox here: ${output.trim() || `exit ${trial?.exitCode ?? "?"}`}`,
        fix: "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or the distribution's AppArmor profile for bwrap), or set the agent's sandbox.mode to \"off\"",
      };
    }
    const processLimit = processLimitHere();
    return {
      available: true,
      engine: "bwrap",
      version: version.stdout.trim(),
      processLimit,
      memoryLimit: memoryController() === undefined ? "rlimit" : "cgroup",
      warnings:
        processLimit === "none"
          ? [
              "the process limit is not enforced: the gateway runs as root and no pids cgroup is writable (run the gateway as an ordinary user, or give it a pids cgroup)",
            ]
          : [],
    };
  };

  return {
    name: "bwrap",
    async probe(probeOptions = {}) {
      const ttl = cached?.status.available ? PROBE_TTL_AVAILABLE_MS : PROBE_TTL_UNAVAILABLE_MS;
      if (!probeOptions.fresh && cached !== undefined && Date.now() - cached.at < ttl) {
        return cached.status;
      }
      const status = await probe();
      cached = { at: Date.now(), status };
      return status;
    },
    check(settings) {
      if (process.getuid?.() === 0) sandboxUserOfRootGateway(settings);
    },
    async run(command) {
      const status = await this.probe();
      if (!status.available) throw new SandboxUnavailableError("bwrap", status.problem, status.fix);
      const bwrap = options.bwrapPath ?? findOnPath("bwrap");
      if (bwrap === undefined)
        throw new SandboxUnavailableError("bwrap", "bwrap is not installed", INSTALL_FIX);
      return launch(command, bwrap);
    },
  };
}

// The no-sandbox engine: a command runs on the host as the gateway's user, in the host directory of its cwd.
// Owns: the same interface and bounds as the real engines where they make sense without containment — the
// environment it is given (scrubbed by the caller), wall time, output and abort — and killing the command's
// process group when it ends. Does not own, and does not give: any filesystem, network, memory or process
// containment. Sessions that need those run under `bwrap`.
import { runProcess } from "./process-runner.ts";
import type { SandboxCommand, SandboxEngine, SandboxResult } from "./types.ts";

function hostCwd(command: SandboxCommand): string {
  const mount = [...command.mounts]
    .sort((a, b) => b.path.length - a.path.length)
    .find((candidate) => command.cwd === candidate.path || command.cwd.startsWith(`${candidate.path}/`));
  if (mount === undefined) return command.cwd;
  return mount.hostPath + command.cwd.slice(mount.path.length);
}

/** The no-sandbox engine: commands run on the host as the gateway's user, with wall time, output and abort bounds but no containment. */
export function createHostEngine(): SandboxEngine {
  return {
    name: "host",
    async probe() {
      return {
        available: true,
        engine: "host",
        version: process.version,
        processLimit: "none",
        memoryLimit: "rlimit",
        warnings: [],
      };
    },
    check() {
      // nothing to check: the host runs whatever it is given
    },
    run(command): Promise<SandboxResult> {
      return runProcess({
        file: "/bin/bash",
        // --norc: a bash whose standard input is a socket (Node's pipes are) thinks sshd started it and reads
        // ~/.bashrc; pi runs its commands without any rc file, and so do we.
        args: ["--norc", "-c", command.command],
        cwd: hostCwd(command),
        env: command.env,
        timeoutMs: command.limits.timeoutMs,
        maxOutputBytes: command.limits.maxOutputBytes,
        signal: command.signal,
        onData: command.onData,
        onStdout: command.onStdout,
        stdin: command.stdin,
      });
    },
  };
}

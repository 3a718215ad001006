// The engines' input and output: standard input given to a command (bytes as they are), standard output
// apart from standard error, on both engines, and on a sandbox started ahead (standby) as on a fresh one.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createBwrapEngine } from "./bwrap-engine.ts";
import { createHostEngine } from "./host-engine.ts";
import { ensureSandboxWorkspace, sandboxLimits } from "./layout.ts";
import type { SandboxEngine } from "./types.ts";

const workspace = ensureSandboxWorkspace(mkdtempSync(join(tmpdir(), "sandbox-io-")));
afterAll(() => rmSync(workspace, { recursive: true, force: true }));
const limits = sandboxLimits({
  timeoutSeconds: 20,
  maxOutputBytes: 1024 * 1024,
  memoryMb: 256,
  maxProcesses: 32,
  maxFileMb: 8,
  tmpMb: 8,
});

describe.each([
  ["bwrap", createBwrapEngine(), "/workspace"],
  ["host", createHostEngine(), workspace],
] as [string, SandboxEngine, string][])("the %s engine", (_name, engine, cwd) => {
  const run = async (command: string, stdin?: Uint8Array | string) => {
    let all = "";
    let stdout = "";
    const result = await engine.run({
      command,
      cwd,
      env: { PATH: "/usr/bin:/bin" },
      mounts: [{ path: cwd, hostPath: workspace, writable: true }],
      network: false,
      limits,
      ...(stdin === undefined ? {} : { stdin }),
      onData: (chunk) => {
        all += chunk.toString("latin1");
      },
      onStdout: (chunk) => {
        stdout += chunk.toString("latin1");
      },
    });
    return { result, all, stdout };
  };

  it("gives the command its standard input byte for byte, twice in a row (the second on a standby)", async () => {
    const bytes = Uint8Array.from({ length: 70_000 }, (_, index) => (index * 7) % 256);
    for (const name of ["in-1.bin", "in-2.bin"]) {
      const { result } = await run(`cat > ${name}`, bytes);
      expect(result.exitCode).toBe(0);
      expect(Buffer.compare(readFileSync(join(workspace, name)), Buffer.from(bytes))).toBe(0);
    }
  });

  it("gives end of file at once when there is no input", async () => {
    const { result, stdout } = await run("cat; echo done");
    expect(result.exitCode).toBe(0);
    expect(stdout).toBe("done\n");
  });

  it("keeps standard output apart from standard error", async () => {
    const { all, stdout } = await run("echo out; echo err >&2; echo out2");
    expect(stdout).toBe("out\nout2\n");
    expect(all).toContain("err\n");
  });
});

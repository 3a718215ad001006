// Tests of the sandbox layout: what each workspace access mounts where, and the scope directories.

import { mkdtempSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ensureSandboxWorkspace,
  SANDBOX_HOST_ID,
  sandboxLayout,
  sandboxLimits,
  sandboxWorkspaceDir,
} from "./layout.ts";

const paths = { agentWorkspace: "/srv/agent", sandboxWorkspace: "/state/sandboxes/s1" };

describe("sandboxLayout", () => {
  it('"none": only the sandbox workspace, writable, at /workspace', () => {
    expect(sandboxLayout({ ...paths, workspaceAccess: "none" })).toEqual({
      cwd: "/workspace",
      mounts: [{ path: "/workspace", hostPath: "/state/sandboxes/s1", writable: true }],
    });
  });
  it('"ro": the agent workspace read-only at /agent besides it', () => {
    expect(sandboxLayout({ ...paths, workspaceAccess: "ro" }).mounts).toEqual([
      { path: "/workspace", hostPath: "/state/sandboxes/s1", writable: true },
      { path: "/agent", hostPath: "/srv/agent", writable: false },
    ]);
  });
  it('"rw": the agent workspace itself, writable, at /workspace', () => {
    expect(sandboxLayout({ ...paths, workspaceAccess: "rw" }).mounts).toEqual([
      { path: "/workspace", hostPath: "/srv/agent", writable: true },
    ]);
  });
});

describe("sandboxWorkspaceDir", () => {
  it("is under the root, distinct per key, and readable", () => {
    const a = sandboxWorkspaceDir("/root/sb", "agent:main:telegram:dm:42");
    const b = sandboxWorkspaceDir("/root/sb", "agent:main:telegram:dm:43");
    expect(a).toMatch(/^\/root\/sb\/agent-main-telegram-dm-42-[0-9a-f]{12}$/);
    expect(a).not.toBe(b);
  });
  it("never leaves the root, whatever the key", () => {
    for (const key of ["../../etc", "/etc/passwd", "a/../../b", "..", ""]) {
      const dir = sandboxWorkspaceDir("/root/sb", key);
      expect(dir.startsWith("/root/sb/")).toBe(true);
      expect(dir.slice("/root/sb/".length)).not.toContain("/");
      expect(dir.endsWith("/..")).toBe(false);
    }
  });
});

describe("sandboxLimits", () => {
  it("converts seconds and MiB", () => {
    expect(
      sandboxLimits({
        timeoutSeconds: 2,
        maxOutputBytes: 10,
        memoryMb: 1,
        maxProcesses: 3,
        maxFileMb: 2,
        tmpMb: 4,
      }),
    ).toEqual({
      timeoutMs: 2000,
      maxOutputBytes: 10,
      memoryBytes: 1048576,
      maxProcesses: 3,
      maxFileBytes: 2097152,
      tmpBytes: 4194304,
    });
  });
});

describe("ensureSandboxWorkspace", () => {
  it("makes the directory private", () => {
    const dir = join(mkdtempSync(join(tmpdir(), "sandbox-ws-")), "a", "b");
    expect(ensureSandboxWorkspace(dir)).toBe(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it.runIf(process.getuid?.() === 0)(
    "as root gives the directory to nobody, and never what is in it (a link swapped in cannot redirect it)",
    () => {
      const dir = mkdtempSync(join(tmpdir(), "sandbox-ws-"));
      const hostFile = join(mkdtempSync(join(tmpdir(), "sandbox-host-")), "secret");
      writeFileSync(hostFile, "root's");
      symlinkSync(dirname(hostFile), join(dir, "link"));
      writeFileSync(join(dir, "inside"), "x");
      ensureSandboxWorkspace(dir);
      expect(statSync(dir).uid).toBe(SANDBOX_HOST_ID);
      expect(statSync(join(dir, "inside")).uid).toBe(0);
      expect(statSync(hostFile).uid).toBe(0);
      // The workspace path itself being a link is refused rather than followed.
      const linked = join(mkdtempSync(join(tmpdir(), "sandbox-ws-")), "ws");
      symlinkSync(dirname(hostFile), linked);
      expect(() => ensureSandboxWorkspace(linked)).toThrow();
      expect(statSync(dirname(hostFile)).uid).toBe(0);
    },
  );
});

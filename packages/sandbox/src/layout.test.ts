// Tests of the sandbox layout: what each workspace access mounts where, and the scope directories.
import { describe, expect, it } from "vitest";
import { sandboxLayout, sandboxLimits, sandboxWorkspaceDir } from "./layout.ts";

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

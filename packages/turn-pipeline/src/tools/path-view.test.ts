import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hostPathView, type PathView, resolveInView, WorkspacePathError } from "./path-view.ts";

// Layout on the host:
//   base/ws        the agent workspace (host view root; /workspace in the sandbox view)
//   base/agent     another directory, mounted read-only at /agent in the sandbox view
//   base/outside   never mounted
let base: string;
let ws: string;
let agentDir: string;
let outside: string;
let sandbox: PathView;

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "path-view-")));
  ws = join(base, "ws");
  agentDir = join(base, "agent");
  outside = join(base, "outside");
  for (const dir of [ws, agentDir, outside]) mkdirSync(dir);
  writeFileSync(join(ws, "inside.txt"), "inside");
  writeFileSync(join(agentDir, "notes.md"), "agent notes");
  writeFileSync(join(outside, "secret.txt"), "secret");
  sandbox = {
    cwd: "/workspace",
    mounts: [
      { path: "/workspace", hostPath: ws, writable: true },
      { path: "/agent", hostPath: agentDir, writable: false },
    ],
  };
});
afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

const refusal = (view: PathView, requested: string, access: "read" | "write" = "read") =>
  resolveInView(view, requested, access).then(
    () => {
      throw new Error(`"${requested}" was accepted`);
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(WorkspacePathError);
      const message = (error as Error).message;
      if (requested.trim() !== "" && !requested.includes("\u0000")) expect(message).toContain(requested);
      return message;
    },
  );

describe("resolveInView in the host view", () => {
  it("resolves relative paths from the workspace and absolute paths inside it", async () => {
    const view = hostPathView(ws);
    expect(await resolveInView(view, "inside.txt", "read")).toEqual({
      hostPath: join(ws, "inside.txt"),
      viewPath: join(ws, "inside.txt"),
      mount: view.mounts[0],
    });
    expect((await resolveInView(view, join(ws, "new/deep.txt"), "write")).hostPath).toBe(
      join(ws, "new/deep.txt"),
    );
    expect((await resolveInView(view, "sub/../inside.txt", "read")).hostPath).toBe(join(ws, "inside.txt"));
    expect((await resolveInView(view, ".", "read")).hostPath).toBe(ws);
  });

  it("refuses .. that climbs out, absolute paths elsewhere, ~, NUL and empty paths", async () => {
    const view = hostPathView(ws);
    expect(await refusal(view, "../outside/secret.txt")).toMatch(/outside the workspace/);
    expect(await refusal(view, "sub/../../outside/secret.txt")).toMatch(/outside the workspace/);
    expect(await refusal(view, "..")).toMatch(/outside the workspace/);
    expect(await refusal(view, join(outside, "secret.txt"))).toMatch(/outside the workspace/);
    expect(await refusal(view, "/etc/passwd")).toMatch(/outside the workspace/);
    expect(await refusal(view, `${ws}-sibling/x`)).toMatch(/outside the workspace/);
    expect(await refusal(view, "~/.ssh/id_rsa")).toMatch(/home directory/);
    expect(await refusal(view, "~")).toMatch(/home directory/);
    expect(await refusal(view, "a\u0000b")).toMatch(/NUL/);
    expect(await refusal(view, "")).toMatch(/empty/);
    expect(await refusal(view, "   ")).toMatch(/empty/);
  });

  it("allows names that merely start with .. (only a whole .. segment climbs)", async () => {
    const view = hostPathView(ws);
    writeFileSync(join(ws, "..foo"), "dots");
    mkdirSync(join(ws, "..dir"));
    expect((await resolveInView(view, "..foo", "read")).hostPath).toBe(join(ws, "..foo"));
    expect((await resolveInView(view, "..dir/new.txt", "write")).hostPath).toBe(join(ws, "..dir/new.txt"));
    expect((await resolveInView(view, join(ws, "..foo"), "read")).hostPath).toBe(join(ws, "..foo"));
    // A file named "~x" is a file, not the home directory.
    expect((await resolveInView(view, "~x", "write")).hostPath).toBe(join(ws, "~x"));
  });

  it("follows symlinks that stay inside and refuses those that leave, dangling ones included", async () => {
    const view = hostPathView(ws);
    mkdirSync(join(ws, "real"));
    writeFileSync(join(ws, "real/file.txt"), "real");
    symlinkSync("real/file.txt", join(ws, "relative-link"));
    symlinkSync(join(ws, "real"), join(ws, "dir-link"));
    symlinkSync(join(outside, "secret.txt"), join(ws, "out-link"));
    symlinkSync(outside, join(ws, "out-dir"));
    symlinkSync("../outside", join(ws, "out-relative"));
    expect((await resolveInView(view, "relative-link", "read")).hostPath).toBe(join(ws, "real/file.txt"));
    expect((await resolveInView(view, "dir-link/new.txt", "write")).hostPath).toBe(join(ws, "real/new.txt"));
    // The name the model used is kept for showing back; the host path is where the link leads.
    expect((await resolveInView(view, "relative-link", "read")).viewPath).toBe(join(ws, "relative-link"));
    expect(await refusal(view, "out-link")).toMatch(/leaves the workspace through a symbolic link/);
    expect(await refusal(view, "out-dir/secret.txt")).toMatch(/symbolic link/);
    expect(await refusal(view, "out-dir/planted.txt", "write")).toMatch(/symbolic link/);
    expect(await refusal(view, "out-relative/secret.txt")).toMatch(/symbolic link/);
  });

  it("refuses writing through a dangling symlink whose target is outside, and creates nothing there", async () => {
    const view = hostPathView(ws);
    symlinkSync(join(outside, "new-file"), join(ws, "notes.md"));
    symlinkSync("../outside/also-new", join(ws, "relative-notes.md"));
    // A chain: the first link stays inside, the second one leaves.
    symlinkSync("hop2", join(ws, "hop1"));
    symlinkSync(join(outside, "chained-new"), join(ws, "hop2"));
    for (const name of ["notes.md", "relative-notes.md", "hop1"]) {
      expect(await refusal(view, name, "write")).toMatch(/leaves the workspace through a symbolic link/);
    }
    expect(existsSync(join(outside, "new-file"))).toBe(false);
    expect(existsSync(join(outside, "also-new"))).toBe(false);
    expect(existsSync(join(outside, "chained-new"))).toBe(false);
  });

  it("resolves a dangling symlink that stays inside to its target (writing creates the target)", async () => {
    const view = hostPathView(ws);
    symlinkSync("drafts/later.md", join(ws, "later"));
    expect((await resolveInView(view, "later", "write")).hostPath).toBe(join(ws, "drafts/later.md"));
  });

  it("refuses a symlink loop instead of spinning", async () => {
    const view = hostPathView(ws);
    symlinkSync("loop-b", join(ws, "loop-a"));
    symlinkSync("loop-a", join(ws, "loop-b"));
    symlinkSync("self", join(ws, "self"));
    expect(await refusal(view, "loop-a")).toMatch(/too many levels of symbolic links/);
    expect(await refusal(view, "self/child", "write")).toMatch(/too many levels of symbolic links/);
  });

  it("accepts the workspace under its symlinked spelling and under its real path", async () => {
    const spelled = join(base, "ws-alias");
    symlinkSync(ws, spelled);
    const view = hostPathView(spelled);
    expect((await resolveInView(view, "inside.txt", "read")).hostPath).toBe(join(ws, "inside.txt"));
    expect((await resolveInView(view, join(spelled, "inside.txt"), "read")).hostPath).toBe(
      join(ws, "inside.txt"),
    );
    expect((await resolveInView(view, join(ws, "inside.txt"), "read")).hostPath).toBe(join(ws, "inside.txt"));
    expect((await resolveInView(view, join(ws, "inside.txt"), "read")).viewPath).toBe(
      join(spelled, "inside.txt"),
    );
    // A link inside the workspace written with the real path is inside too.
    symlinkSync(join(ws, "inside.txt"), join(ws, "by-real-path"));
    expect((await resolveInView(view, "by-real-path", "read")).hostPath).toBe(join(ws, "inside.txt"));
    expect(await refusal(view, join(base, "outside/secret.txt"))).toMatch(/outside the workspace/);
  });

  it("says so when the workspace directory does not exist", async () => {
    expect(await refusal(hostPathView(join(base, "missing")), "a.txt")).toMatch(/not available/);
  });
});

describe("resolveInView in a sandbox view", () => {
  it("maps view paths to host paths, relative ones from the cwd", async () => {
    expect(await resolveInView(sandbox, "inside.txt", "read")).toMatchObject({
      hostPath: join(ws, "inside.txt"),
      viewPath: "/workspace/inside.txt",
    });
    expect((await resolveInView(sandbox, "/workspace/inside.txt", "write")).hostPath).toBe(
      join(ws, "inside.txt"),
    );
    expect(await resolveInView(sandbox, "/agent/notes.md", "read")).toMatchObject({
      hostPath: join(agentDir, "notes.md"),
      mount: { path: "/agent", writable: false },
    });
    // .. may leave one mount for another: the sandbox shows both.
    expect((await resolveInView(sandbox, "../agent/notes.md", "read")).hostPath).toBe(
      join(agentDir, "notes.md"),
    );
  });

  it("refuses paths outside every mount, the host paths of the mounts included", async () => {
    expect(await refusal(sandbox, "/")).toMatch(/outside the workspace/);
    expect(await refusal(sandbox, "/etc/passwd")).toMatch(/outside the workspace/);
    expect(await refusal(sandbox, "../../etc/passwd")).toMatch(/outside the workspace/);
    expect(await refusal(sandbox, "/workspacex/file")).toMatch(/outside the workspace/);
    // The sandbox does not show host paths, even of its own mounts.
    expect(await refusal(sandbox, join(ws, "inside.txt"))).toMatch(/outside the workspace/);
    expect(await refusal(sandbox, "/etc/passwd")).toContain("/workspace, /agent (read-only)");
  });

  it("refuses writing into a read-only mount, and allows reading it", async () => {
    expect(await refusal(sandbox, "/agent/notes.md", "write")).toMatch(/\/agent, which is read-only/);
    expect(await refusal(sandbox, "/agent/new.md", "write")).toMatch(/read-only/);
    expect(await refusal(sandbox, "../agent/new.md", "write")).toMatch(/read-only/);
    expect((await resolveInView(sandbox, "/agent/notes.md", "read")).hostPath).toBe(
      join(agentDir, "notes.md"),
    );
    expect(existsSync(join(agentDir, "new.md"))).toBe(false);
  });

  it("follows links as the sandbox does: absolute targets are view paths", async () => {
    symlinkSync("/workspace/inside.txt", join(ws, "absolute-link"));
    symlinkSync("/agent/notes.md", join(ws, "to-agent"));
    symlinkSync("../agent", join(ws, "agent-dir"));
    symlinkSync(join(ws, "inside.txt"), join(ws, "host-spelled"));
    symlinkSync("/etc/passwd", join(ws, "etc-link"));
    expect((await resolveInView(sandbox, "absolute-link", "write")).hostPath).toBe(join(ws, "inside.txt"));
    expect((await resolveInView(sandbox, "to-agent", "read")).hostPath).toBe(join(agentDir, "notes.md"));
    expect((await resolveInView(sandbox, "agent-dir/notes.md", "read")).hostPath).toBe(
      join(agentDir, "notes.md"),
    );
    // Writing through a link into the read-only mount is refused like writing there directly.
    expect(await refusal(sandbox, "to-agent", "write")).toMatch(
      /symbolic link into \/agent, which is read-only/,
    );
    expect(await refusal(sandbox, "agent-dir/planted.md", "write")).toMatch(/read-only/);
    // A host path is not a path in the sandbox, whatever exists there on the host.
    expect(await refusal(sandbox, "host-spelled")).toMatch(/symbolic link/);
    expect(await refusal(sandbox, "etc-link")).toMatch(/symbolic link/);
  });

  it("picks the longest mount a path is under, segment by segment", async () => {
    const shared = join(base, "shared");
    mkdirSync(shared);
    mkdirSync(join(ws, "shared"));
    const nested: PathView = {
      cwd: "/workspace",
      mounts: [
        { path: "/workspace/shared", hostPath: shared, writable: false },
        { path: "/workspace", hostPath: ws, writable: true },
      ],
    };
    expect(await resolveInView(nested, "shared/doc.md", "read")).toMatchObject({
      hostPath: join(shared, "doc.md"),
      mount: { path: "/workspace/shared" },
    });
    expect(await refusal(nested, "shared/doc.md", "write")).toMatch(/read-only/);
    // "/workspace/shared-notes" starts with the nested mount's text but is not under it.
    expect(await resolveInView(nested, "shared-notes/doc.md", "write")).toMatchObject({
      hostPath: join(ws, "shared-notes/doc.md"),
      mount: { path: "/workspace" },
    });
    expect(existsSync(join(ws, "shared", "doc.md"))).toBe(false);
  });

  it("can show the agent workspace itself as /workspace", async () => {
    const direct: PathView = {
      cwd: "/workspace",
      mounts: [{ path: "/workspace", hostPath: ws, writable: true }],
    };
    expect((await resolveInView(direct, "sub/new.txt", "write")).hostPath).toBe(join(ws, "sub/new.txt"));
    expect(await refusal(direct, "/agent/notes.md")).toMatch(/outside the workspace/);
  });
});

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
import { resolveInsideWorkspace, WorkspacePathError } from "./workspace-paths.ts";

let base: string;
let ws: string;
let outside: string;

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "workspace-paths-")));
  ws = join(base, "ws");
  outside = join(base, "outside");
  mkdirSync(ws);
  mkdirSync(outside);
});
afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

describe("resolveInsideWorkspace", () => {
  it("is the host view: relative and absolute paths inside, ..foo allowed, .. out refused", async () => {
    expect(await resolveInsideWorkspace(ws, "a/b.txt")).toBe(join(ws, "a/b.txt"));
    expect(await resolveInsideWorkspace(ws, join(ws, "c.txt"))).toBe(join(ws, "c.txt"));
    expect(await resolveInsideWorkspace(ws, "..foo")).toBe(join(ws, "..foo"));
    await expect(resolveInsideWorkspace(ws, "../outside/x")).rejects.toThrow(WorkspacePathError);
    await expect(resolveInsideWorkspace(ws, "../outside/x")).rejects.toThrow(/"\.\.\/outside\/x" is outside/);
  });

  it("refuses a write through a dangling symlink that points outside", async () => {
    symlinkSync(join(outside, "new-file"), join(ws, "notes.md"));
    await expect(resolveInsideWorkspace(ws, "notes.md")).rejects.toThrow(/through a symbolic link/);
    expect(existsSync(join(outside, "new-file"))).toBe(false);
  });

  it("returns where a link inside the workspace leads", async () => {
    writeFileSync(join(ws, "target.txt"), "t");
    symlinkSync("target.txt", join(ws, "link.txt"));
    expect(await resolveInsideWorkspace(ws, "link.txt")).toBe(join(ws, "target.txt"));
  });
});

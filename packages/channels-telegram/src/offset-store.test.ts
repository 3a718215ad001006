// The file offset store at rest: the polling state (offset, handled ids, bot id) is written owner-only (0600,
// a folder it creates 0700) under any umask, an older release's 0644 file is tightened when first read, and
// the caller's existing folder keeps its mode.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fileOffsetStore } from "./offset-store.ts";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function parent(): string {
  const root = mkdtempSync(join(tmpdir(), "telegram-offset-"));
  roots.push(root);
  chmodSync(root, 0o755);
  return root;
}

function mode(path: string): string {
  return `0${(statSync(path).mode & 0o777).toString(8)}`;
}

describe("fileOffsetStore at rest", () => {
  it("creates the file 0600 and a missing folder 0700, even under umask 0000", async () => {
    const root = parent();
    const path = join(root, "channels", "telegram-offset.json");
    const previous = process.umask(0o000);
    try {
      const store = fileOffsetStore(path);
      await store.claimForBot?.(123456);
      await store.save(1004);
    } finally {
      process.umask(previous);
    }
    expect({ folder: mode(join(root, "channels")), file: mode(path), parent: mode(root) }).toEqual({
      folder: "0700",
      file: "0600",
      parent: "0755",
    });
  });

  it("tightens an older release's 0644 file when it is first read, keeping the caller's folder as it is", async () => {
    const root = parent();
    const folder = join(root, "shared");
    mkdirSync(folder, { mode: 0o755 });
    chmodSync(folder, 0o755);
    const path = join(folder, "telegram-offset.json");
    writeFileSync(path, `${JSON.stringify({ offset: 7, handled: [], botId: 1 })}\n`);
    chmodSync(path, 0o644);
    expect(await fileOffsetStore(path).load()).toBe(7);
    expect(mode(path)).toBe("0600");
    expect(mode(folder)).toBe("0755");
  });
});

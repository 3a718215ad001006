// Storage faults on real files for the reliability suite: a small disk (a tmpfs mounted over a folder, its
// content copied in, then filled up to what a trial leaves free), a file that refuses writes (immutable for
// root, whom modes do not stop; mode 0444 otherwise), and rows damaged or deleted behind the store's back
// with better-sqlite3. Each says why it cannot run here (not root, no tmpfs, no chattr) instead of failing.
import { execFileSync } from "node:child_process";
import { chmodSync, closeSync, openSync, rmSync, statfsSync, writeSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";

/** A tmpfs of `sizeKb` over `dir` (its content copied in); a string says why not. */
export function mountSmallDisk(dir: string, sizeKb: number): { unmount(): void } | string {
  if (process.getuid?.() !== 0) return "mounting a small tmpfs needs root";
  const saved = `${dir}.before-mount`;
  try {
    execFileSync("cp", ["-a", dir, saved]);
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeKb}k,mode=0700`, "tmpfs", dir], {
      stdio: "pipe",
    });
    execFileSync("cp", ["-a", `${saved}/.`, dir]);
  } catch (error) {
    return `cannot mount a tmpfs here: ${(error as Error).message.split("\n")[0]}`;
  } finally {
    rmSync(saved, { recursive: true, force: true });
  }
  let mounted = true;
  return {
    unmount() {
      if (!mounted) return;
      mounted = false;
      execFileSync("umount", ["-l", dir]);
    },
  };
}

/** Fills the file system holding `dir` with `dir/filler` until `freeKb` is left; returns the filler's path. */
export function fillLeaving(dir: string, freeKb: number): string {
  const stats = statfsSync(dir);
  let toWrite = stats.bavail * stats.bsize - freeKb * 1024;
  const path = join(dir, "filler");
  const fd = openSync(path, "w");
  const chunk = Buffer.alloc(64 * 1024);
  try {
    while (toWrite > 0) toWrite -= writeSync(fd, chunk, 0, Math.min(chunk.length, toWrite));
  } finally {
    closeSync(fd);
  }
  return path;
}

/** Makes `path` refuse writes (root: `chattr +i`; others: mode 0444); a string says why it cannot. */
export function makeReadOnly(path: string): { undo(): void } | string {
  if (process.getuid?.() !== 0) {
    chmodSync(path, 0o444);
    return { undo: () => chmodSync(path, 0o600) };
  }
  try {
    execFileSync("chattr", ["+i", path], { stdio: "pipe" });
  } catch (error) {
    return `root ignores file modes, and chattr +i is not available here: ${(error as Error).message.split("\n")[0]}`;
  }
  return { undo: () => execFileSync("chattr", ["-i", path], { stdio: "pipe" }) };
}

/** Runs `use` on the SQLite file at `path` (behind the store's back) and closes it. */
export function withDatabase<T>(path: string, use: (db: Database.Database) => T): T {
  const db = new Database(path);
  try {
    return use(db);
  } finally {
    db.close();
  }
}

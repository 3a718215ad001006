// `pg` and `pg-boss` are optional peers: a SQLite-only user must never load them. This walks the static import
// graph (relative `import`/`export ... from` of .ts files) from each entry point and checks which packages it
// reaches: the SQLite entries reach neither, the PostgreSQL entry reaches `pg` but loads pg-boss only
// on demand (a dynamic import inside `startQueueDispatcher`).
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "..");

/** Every bare package specifier statically reachable from `entry`, and the files on the way. */
function reach(entry: string): { packages: Set<string>; files: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const pending = [resolve(entry)];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (files.has(file)) continue;
    files.add(file);
    const text = readFileSync(file, "utf8");
    // Static imports and re-exports only; `import type` is erased and never loads anything.
    for (const match of text.matchAll(/^\s*(?:import|export)\s+(?!type\s)[^;]*?from\s+"([^"]+)"/gms)) {
      const specifier = match[1] ?? "";
      if (specifier.startsWith(".")) pending.push(resolve(dirname(file), specifier));
      else
        packages.add(
          specifier.startsWith("@")
            ? specifier.split("/").slice(0, 2).join("/")
            : (specifier.split("/")[0] ?? ""),
        );
    }
  }
  return { packages, files };
}

describe("optional PostgreSQL dependencies", () => {
  it("the SQLite entries (`.` and `./testing`) never load pg or pg-boss, nor anything under src/postgres", () => {
    for (const entry of ["index.ts", "testing/index.ts"]) {
      const { packages, files } = reach(join(SRC, entry));
      expect(packages.has("better-sqlite3"), entry).toBe(true);
      expect(packages.has("pg"), entry).toBe(false);
      expect(packages.has("pg-boss"), entry).toBe(false);
      expect(
        [...files].filter((file) => file.includes(`${join(SRC, "postgres")}`)),
        entry,
      ).toEqual([]);
    }
  });

  it("the PostgreSQL entry loads pg, and pg-boss only when dispatch starts", () => {
    const { packages } = reach(join(SRC, "postgres", "index.ts"));
    expect(packages.has("pg")).toBe(true);
    expect(packages.has("kysely")).toBe(true);
    expect(packages.has("pg-boss")).toBe(false);
    expect(readFileSync(join(SRC, "postgres", "dispatch.ts"), "utf8")).toContain('await import("pg-boss")');
  });
});

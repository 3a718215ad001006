import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { cachingDatabase } from "./statement-cache.ts";

interface Db {
  items: { id: number; name: string };
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function open(capacity: number): { raw: Database.Database; db: Kysely<Db>; prepared: string[] } {
  const dir = mkdtempSync(join(tmpdir(), "statement-cache-"));
  dirs.push(dir);
  const raw = new Database(join(dir, "x.db"));
  raw.exec("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL)");
  // Count what really reaches SQLite's prepare.
  const prepared: string[] = [];
  const prepare = raw.prepare.bind(raw);
  raw.prepare = ((sql: string) => {
    prepared.push(sql);
    return prepare(sql);
  }) as typeof raw.prepare;
  return {
    raw,
    db: new Kysely<Db>({ dialect: new SqliteDialect({ database: cachingDatabase(raw, capacity) }) }),
    prepared,
  };
}

describe("the prepared-statement cache under Kysely", () => {
  it("prepares each SQL text once and gives the same answers as fresh statements", async () => {
    const { db, prepared } = open(8);
    for (let id = 1; id <= 5; id++)
      await db
        .insertInto("items")
        .values({ id, name: `n${id}` })
        .execute();
    for (let id = 1; id <= 5; id++) {
      expect(await db.selectFrom("items").select("name").where("id", "=", id).executeTakeFirst()).toEqual({
        name: `n${id}`,
      });
    }
    const result = await db.updateTable("items").set({ name: "x" }).where("id", ">", 3).executeTakeFirst();
    expect(result.numUpdatedRows).toBe(2n);
    expect(prepared.filter((sql) => sql.startsWith("insert"))).toHaveLength(1);
    expect(prepared.filter((sql) => sql.startsWith("select"))).toHaveLength(1);
    await db.destroy();
  });

  it("evicts the least recently used text beyond its capacity and prepares it again when needed", async () => {
    const { db, prepared } = open(2);
    const byId = () => db.selectFrom("items").selectAll().where("id", "=", 1).execute();
    const byName = () => db.selectFrom("items").selectAll().where("name", "=", "a").execute();
    const all = () => db.selectFrom("items").selectAll().execute();
    await db.insertInto("items").values({ id: 1, name: "a" }).execute();
    await byId();
    await byName();
    await byId(); // most recent now: byName is the oldest
    await all(); // evicts the insert (oldest), then byName on the next miss
    await byName();
    await byId();
    const count = (needle: string) => prepared.filter((sql) => sql.includes(needle)).length;
    expect(count('where "id"')).toBe(2);
    expect(count('where "name"')).toBe(2);
    expect(await byName()).toEqual([{ id: 1, name: "a" }]);
    await db.destroy();
  });

  it("iterates on a statement of its own, so the cached one stays usable meanwhile", () => {
    const { raw } = open(8);
    raw.exec("INSERT INTO items (id, name) VALUES (1, 'a'), (2, 'b'), (3, 'c')");
    const cache = cachingDatabase(raw, 8);
    const sql = "SELECT id FROM items ORDER BY id";
    const seen: unknown[] = [];
    for (const row of cache.prepare(sql).iterate([])) {
      seen.push(row);
      // better-sqlite3 refuses to reuse a statement that is mid-iteration: this one is not that statement.
      expect(cache.prepare(sql).all([])).toHaveLength(3);
    }
    expect(seen).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
    cache.close();
  });
});

import { readFileSync, writeFileSync } from "node:fs";
import Database from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { describe, expect, it } from "vitest";
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from "./index.ts";
import {
  type CompiledSqliteMigration,
  SQLITE_LATEST_SCHEMA_VERSION,
  SQLITE_MIGRATIONS,
} from "./sqlite-compiled.ts";

function compileAll(): CompiledSqliteMigration[] {
  const db = new Database(":memory:");
  const compiler = new Kysely<unknown>({ dialect: new SqliteDialect({ database: db }) });
  try {
    return [...MIGRATIONS]
      .sort((a, b) => a.version - b.version)
      .map((migration) => {
        const part = (which: "controlPlane" | "agent") =>
          migration[which](compiler, "sqlite").map((query) => {
            expect(query.parameters, `migration ${migration.version} binds parameters`).toEqual([]);
            return query.sql;
          });
        return {
          version: migration.version,
          name: migration.name,
          controlPlane: part("controlPlane"),
          agent: part("agent"),
        };
      });
  } finally {
    db.close();
  }
}

describe("precompiled SQLite migrations", () => {
  it("are exactly what the Kysely migrations compile to", () => {
    const compiled = compileAll();
    if (process.env.UPDATE_SQLITE_MIGRATIONS === "1") {
      const file = new URL("./sqlite-compiled.ts", import.meta.url);
      const body = compiled.map((m) => `  ${JSON.stringify(m)},`).join("\n");
      const text = readFileSync(file, "utf8").replace(
        /(\/\/ @generated-start\n)[\s\S]*?([ \t]*\/\/ @generated-end)/,
        `$1${body}\n$2`,
      );
      writeFileSync(file, text);
    }
    expect(SQLITE_MIGRATIONS).toEqual(compiled);
    expect(SQLITE_LATEST_SCHEMA_VERSION).toBe(LATEST_SCHEMA_VERSION);
  });
});

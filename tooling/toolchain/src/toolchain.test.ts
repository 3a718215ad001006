// Proves the bootstrap (tooling/pnpm) produced a working toolchain: the
// project's Node, the prebuilt better-sqlite3 addon, Kysely over it, and the
// pinned pi SDK loading and completing a turn offline. Every later package
// builds on these; when one breaks, this file says which.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createModels, fauxAssistantMessage, fauxProvider } from "@earendil-works/pi-ai";
import Database from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { describe, expect, it } from "vitest";

const PI_VERSION = "0.87.1";

describe("toolchain", () => {
  it("runs on Node >= 22.19 (pi needs node:fs globSync)", () => {
    const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
    expect(major > 22 || (major === 22 && minor >= 19)).toBe(true);
  });

  it("loads the better-sqlite3 prebuild and runs Kysely over it in WAL mode", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "toolchain-")), "probe.sqlite");
    const sqlite = new Database(file);
    expect(sqlite.pragma("journal_mode = WAL", { simple: true })).toBe("wal");
    const db = new Kysely<{ note: { id: number; body: string } }>({
      dialect: new SqliteDialect({ database: sqlite }),
    });
    try {
      await db.schema
        .createTable("note")
        .addColumn("id", "integer", (c) => c.primaryKey())
        .addColumn("body", "text")
        .execute();
      await db
        .insertInto("note")
        .values([
          { id: 1, body: "alpha" },
          { id: 2, body: "beta" },
        ])
        .execute();
      const rows = await db.selectFrom("note").select(["id", "body"]).orderBy("id").execute();
      expect(rows).toEqual([
        { id: 1, body: "alpha" },
        { id: 2, body: "beta" },
      ]);
    } finally {
      await db.destroy();
    }
  });

  it("has the pinned pi SDK set", () => {
    // The packages' exports maps hide package.json, so read it from disk.
    for (const name of ["pi-ai", "pi-agent-core", "pi-coding-agent"]) {
      const path = join(import.meta.dirname, "..", "node_modules", "@earendil-works", name, "package.json");
      const manifest = JSON.parse(readFileSync(path, "utf8")) as { version: string };
      expect(`${name}@${manifest.version}`).toBe(`${name}@${PI_VERSION}`);
    }
  });

  it("completes through pi-ai's faux provider, offline", async () => {
    const faux = fauxProvider();
    const models = createModels();
    models.setProvider(faux.provider);
    faux.setResponses([fauxAssistantMessage("hello from faux")]);
    const message = await models.complete(faux.getModel(), {
      messages: [{ role: "user", content: "hi", timestamp: Date.now() }],
    });
    const text = message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
    expect({ text, stopReason: message.stopReason, calls: faux.state.callCount }).toEqual({
      text: "hello from faux",
      stopReason: "stop",
      calls: 1,
    });
  });

  it("loads pi-agent-core and pi-coding-agent (createAgentSession) on this Node", async () => {
    const core = await import("@earendil-works/pi-agent-core");
    const coding = await import("@earendil-works/pi-coding-agent");
    expect(typeof core.Agent).toBe("function");
    expect(typeof coding.createAgentSession).toBe("function");
  });
});

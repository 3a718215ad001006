// Part of the session-store conformance suite (see conformance.ts). Owns: migrations: fresh, from the first schema,
// from the future. Does not own: the other parts of the suite, the shared fixture helpers (conformance-kit.ts) or
// any backend's set-up.
import { describe, expect, it } from "vitest";
import { StoreVersionError } from "../errors.ts";
import {
  FIRST_SCHEMA_SAMPLE,
  ids,
  load,
  messageEntry,
  ref,
  type SessionStoreFactory,
} from "./conformance-kit.ts";

/** Registers the conformance tests for migrations: fresh, from the first schema, from the future. */
export function describeMigrationConformance(factory: SessionStoreFactory): void {
  describe("migrations", () => {
    it("migrates an empty store to the latest version and records each step once", async () => {
      const fixture = await factory();
      try {
        const first = await fixture.open();
        const schema = await first.schema();
        expect(schema.version).toBe(schema.latestVersion);
        expect(schema.applied.map((m) => m.version)).toEqual(
          Array.from({ length: schema.latestVersion }, (_unused, index) => index + 1),
        );
        await first.close();
        const second = await fixture.open();
        expect((await second.schema()).applied).toEqual(schema.applied);
        await second.close();
      } finally {
        await fixture.dispose();
      }
    });

    it("upgrades a store written with the first schema, keeping its data", async () => {
      const fixture = await factory();
      try {
        if (fixture.seedFirstSchema === undefined) return;
        await fixture.seedFirstSchema();
        const store = await fixture.open();
        const sample = FIRST_SCHEMA_SAMPLE;
        const schema = await store.schema();
        expect(schema.version).toBe(schema.latestVersion);
        expect(schema.applied[0]?.version).toBe(1);
        const session = await store.sessions.get({ agentId: sample.agentId, sessionKey: sample.sessionKey });
        expect(session).toMatchObject({ sessionId: sample.sessionId, meta: sample.meta });
        expect(await store.runs.get(sample.runId)).toMatchObject({
          status: "succeeded",
          provider: "anthropic",
        });
        expect(await store.runs.events(sample.runId)).toEqual(sample.runEvents);
        await load(store, sample.agentId, sample.sessionId);
        const transcript = store.openTranscript(sample.agentId, sample.sessionId);
        expect(ids(transcript.getEntries())).toEqual([...sample.entryIds]);
        expect(transcript.getLeafId()).toBe(sample.leafId);
        expect(ids(transcript.getBranch())).toEqual([...sample.branchToLeaf]);
        transcript.append(messageEntry("after-upgrade", sample.leafId));
        expect(transcript.getLeafId()).toBe("after-upgrade");
        expect(ids(transcript.getBranch())).toEqual([...sample.branchToLeaf, "after-upgrade"]);
        await store.runs.update(sample.runId, { thinkingLevel: "low" });
        await store.auth.update(sample.agentId, "p", (c) => ({ ...c, lastUsed: 1 }));
        expect((await store.runs.get(sample.runId))?.thinkingLevel).toBe("low");
        await store.close();
      } finally {
        await fixture.dispose();
      }
    });

    it("refuses a store from a newer release with an error naming both versions", async () => {
      const fixture = await factory();
      try {
        if (fixture.seedFutureVersion === undefined) return;
        const store = await fixture.open();
        const latest = (await store.schema()).latestVersion;
        await store.sessions.create({ ...ref, sessionId: "s1" });
        await store.close();
        await fixture.seedFutureVersion(latest + 7);
        const failure = await fixture.open().then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(failure).toBeInstanceOf(StoreVersionError);
        expect(String(failure)).toContain(`schema version ${latest + 7}`);
        expect(String(failure)).toContain(`supports up to version ${latest}`);
      } finally {
        await fixture.dispose();
      }
    });
  });
}

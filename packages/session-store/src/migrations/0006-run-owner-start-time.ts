// Migration 6: a run records when its owner process started (`owner_start_time`, Linux clock ticks since boot)
// and the boot it started in (`owner_boot_id`), so recovery tells a pid reused by another process, or a
// reboot, from the owner itself. Both are null on older rows (and off Linux): the pid alone decides there.
// Agent databases are unchanged.
import type { Migration } from "./types.ts";

export const migration0006: Migration = {
  version: 6,
  name: "run-owner-start-time",
  // One column per statement: SQLite's ALTER TABLE adds one column at a time.
  controlPlane: (db) => [
    db.schema.alterTable("runs").addColumn("owner_start_time", "bigint").compile(),
    db.schema.alterTable("runs").addColumn("owner_boot_id", "text").compile(),
  ],
  agent: () => [],
};

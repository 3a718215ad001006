// `agent -m` leaves its state dir owner-only: after a real turn (a subprocess against tooling/fake-llm), every
// folder and file under the state dir (the store's databases and what SQLite keeps next to them) gives group
// and others no access. The workspace is user content, not state: a file a tool wrote there keeps the mode
// the user's umask gives it.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { reply, toolCall } from "@agent-kernel/fake-llm";
import { describe, expect, it } from "vitest";
import { createCliHarness } from "../test/cli-harness.ts";
import { EXIT } from "./exit-codes.ts";

function walk(dir: string): string[] {
  const found = [dir];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    found.push(...(entry.isDirectory() ? walk(path) : [path]));
  }
  return found;
}

function octal(path: string): string {
  return `0${(statSync(path).mode & 0o777).toString(8)}`;
}

describe("agent -m and the state dir at rest", () => {
  it("creates only owner-only folders and files in the state dir, and leaves the workspace's modes alone", async ({
    onTestFinished,
  }) => {
    const h = await createCliHarness();
    onTestFinished(() => h.close());
    h.llm.enqueue(toolCall("write", { path: "notes.md", content: "# Notes\n" }), reply("Wrote notes.md."));
    const result = await h.run(["-m", "my key is sk-live-0123456789; write the notes"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(EXIT.ok);

    const paths = walk(h.stateDir);
    expect(paths).toEqual(
      expect.arrayContaining([
        join(h.stateDir, "state", "kernel.sqlite"),
        join(h.stateDir, "agents", "main", "agent.sqlite"),
      ]),
    );
    const shared = paths
      .filter((path) => (statSync(path).mode & 0o077) !== 0)
      .map((path) => [path, octal(path)]);
    expect(shared).toEqual([]);

    // The subprocess had this process's umask: the workspace file has the mode it gives, not 0600.
    const mask = process.umask(0o022);
    process.umask(mask);
    expect(octal(join(h.workspaceDir, "notes.md"))).toBe(`0${(0o666 & ~mask).toString(8)}`);
  });
});

// `agent sessions`, `agent runs`, `agent replay` and `agent doctor` as subprocesses over a store the CLI itself
// filled (one real turn against tooling/fake-llm), plus not-found exits.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { reply, toolCall } from "@agent-kernel/fake-llm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliHarness, createCliHarness } from "../test/cli-harness.ts";
import { EXIT } from "./exit-codes.ts";

let h: CliHarness;
let runId: string;
beforeAll(async () => {
  h = await createCliHarness();
  writeFileSync(join(h.workspaceDir, "todo.md"), "- ship it\n");
  h.llm.enqueue(
    toolCall("read", { path: "todo.md" }, { text: "Reading." }),
    toolCall("write", { path: "done.md", content: "- shipped\n" }),
    reply("Read the list and wrote done.md."),
  );
  const turn = await h.run(["-m", "do the list", "--session-key", "chores"]);
  expect(turn.code).toBe(EXIT.ok);
  const runs = JSON.parse((await h.run(["runs", "list", "--json"])).stdout) as { runId: string }[];
  runId = runs[0]?.runId ?? "";
});
afterAll(async () => {
  await h?.close();
});

describe.concurrent("inspecting the store", () => {
  it("sessions list and show (by key or session id)", async () => {
    const list = await h.run(["sessions", "list"]);
    expect(list.code).toBe(EXIT.ok);
    expect(list.stdout).toMatch(/SESSION KEY\s+SESSION ID/);
    expect(list.stdout).toContain("agent:main:chores");
    const json = JSON.parse((await h.run(["sessions", "list", "--json", "--agent", "main"])).stdout) as {
      sessionKey: string;
      sessionId: string;
    }[];
    expect(json.map((s) => s.sessionKey)).toEqual(["agent:main:chores"]);

    const show = await h.run(["sessions", "show", "chores"]);
    expect(show.code).toBe(EXIT.ok);
    expect(show.stdout).toContain("Session agent:main:chores");
    expect(show.stdout).toMatch(/user\s+do the list/);
    expect(show.stdout).toContain(runId);
    const byId = await h.run(["sessions", "show", json[0]?.sessionId ?? "?", "--json"]);
    expect(JSON.parse(byId.stdout)).toMatchObject({ session: { sessionKey: "agent:main:chores" } });
  });

  it("runs show prints every decision of the run", async () => {
    const show = await h.run(["runs", "show", runId]);
    expect(show.code).toBe(EXIT.ok);
    for (const part of [
      `Run ${runId}`,
      "status:      succeeded",
      "model          scripted/m1  (defaults)",
      "candidates     scripted/m1 (requested)",
      'write: allowed by tools.profile (coding) — allow "write"',
      "#1 scripted/m1 thinking=",
      "Fallback: none (the first candidate answered)",
      'read {"path":"todo.md"} → ok: "- ship it\\n"',
      "Model replies (3):",
    ]) {
      expect(show.stdout).toContain(part);
    }
    const json = JSON.parse((await h.run(["runs", "show", runId, "--json"])).stdout);
    expect(json).toMatchObject({ run: { runId, status: "succeeded" }, decisions: { phase: "prepared" } });
    expect(json.toolCalls.map((call: { name: string }) => call.name)).toEqual(["read", "write"]);
  });

  it("unknown sessions and runs exit 3", async () => {
    const run = await h.run(["runs", "show", "no-such-run"]);
    expect(run.code).toBe(EXIT.notFound);
    expect(run.stderr).toMatch(/^agent: no run "no-such-run" in /);
    expect((await h.run(["sessions", "show", "nope"])).code).toBe(EXIT.notFound);
    expect((await h.run(["replay", "no-such-run"])).code).toBe(EXIT.notFound);
  });

  it("replay re-runs the stored run offline with no divergence", async () => {
    const requestsBefore = h.llm.requests.length;
    const replay = await h.run(["replay", runId]);
    expect(replay.stderr).toBe("");
    expect(replay.code).toBe(EXIT.ok);
    expect(replay.stdout).toContain("recorded: ok, 3 model calls, 2 tool calls");
    expect(replay.stdout).toContain("no divergence");
    // Offline: the fake server saw nothing.
    expect(h.llm.requests.length).toBe(requestsBefore);
  });

  it("doctor checks the store and imports a pi JSONL file", async () => {
    const file = join(h.root, "legacy.jsonl");
    const ts = "2026-01-01T00:00:00.000Z";
    writeFileSync(
      file,
      [
        { type: "session", version: 3, id: "legacy-1", timestamp: ts, cwd: h.workspaceDir },
        {
          type: "message",
          id: "u1",
          parentId: null,
          timestamp: ts,
          message: { role: "user", content: "hello from pi", timestamp: 0 },
        },
      ]
        .map((entry) => JSON.stringify(entry))
        .join("\n"),
    );
    const doctor = await h.run(["doctor", file, "--json"]);
    expect(doctor.code).toBe(EXIT.ok);
    const report = JSON.parse(doctor.stdout);
    expect(report.problems).toEqual([]);
    expect(report.schema.version).toBe(report.schema.latestVersion);
    expect(report.imported.transcripts).toMatchObject([{ sessionId: "legacy-1", added: 1 }]);
    const missing = await h.run(["doctor", join(h.root, "nope.jsonl")]);
    expect(missing.code).toBe(EXIT.usage);
    expect(missing.stderr).toMatch(/legacy path .*nope\.jsonl does not exist/);
  });
});

describe("replay reports divergence", () => {
  it("exits 4 when the workspace changed what a tool returns", async () => {
    writeFileSync(join(h.workspaceDir, "todo.md"), "- something else\n");
    const replay = await h.run(["replay", runId]);
    expect(replay.code).toBe(EXIT.diverged);
    expect(replay.stdout).toMatch(
      /diverged: tool call 1 \(read\): result recorded "- ship it\\n", replay "- something else\\n"/,
    );
  });
});

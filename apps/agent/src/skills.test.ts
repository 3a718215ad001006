// `agent skills list` and the skills a turn's system prompt lists, as subprocesses over a scratch workspace and
// tooling/fake-llm: what the command shows is what the model is sent, a gated skill says why, and a skill added
// after a session's first turn shows in the next session only.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { reply } from "@agent-kernel/fake-llm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliHarness, createCliHarness } from "../test/cli-harness.ts";
import { EXIT } from "./exit-codes.ts";

let h: CliHarness;
function skill(name: string, frontmatter: string): string {
  const dir = join(h.workspaceDir, "skills", name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "SKILL.md"), `---\n${frontmatter}\n---\nSteps for ${name}.\n`);
  return join(dir, "SKILL.md");
}
/** The system prompt of the fake LLM's request `index` (OpenAI wire: the first message). */
function systemPromptOf(index: number): string {
  const body = h.llm.requests[index]?.body as { messages?: { role: string; content: unknown }[] } | null;
  const system = body?.messages?.find((message) => message.role === "system" || message.role === "developer");
  return typeof system?.content === "string" ? system.content : JSON.stringify(system?.content ?? "");
}

beforeAll(async () => {
  h = await createCliHarness();
});
afterAll(async () => {
  await h?.close();
});

describe("agent skills list", () => {
  it("shows each skill, offered or gated with the reason, in text and JSON; an unknown agent is a usage error", async () => {
    const weather = skill("weather", "name: weather\ndescription: Look up the weather");
    skill(
      "deploy",
      'description: Deploy the app\nmetadata: {"openclaw": {"requires": {"env": ["DEPLOY_TOKEN"]}}}',
    );
    const text = await h.run(["skills", "list"]);
    expect(text.code).toBe(EXIT.ok);
    expect(text.stdout).toContain("agent main: 1 of 2 skills offered");
    expect(text.stdout).toContain(`ok     weather (workspace) ${weather}`);
    expect(text.stdout).toMatch(/gated {2}deploy \(workspace\).*\n\s+env: DEPLOY_TOKEN not set/);

    const json = JSON.parse((await h.run(["skills", "list", "--json"])).stdout) as {
      skills: { name: string; eligible: boolean; reasons: string[] }[];
    };
    expect(json.skills.map((s) => [s.name, s.eligible])).toEqual([
      ["deploy", false],
      ["weather", true],
    ]);
    const withKey = await h.run(["skills", "list", "--json"], { env: { DEPLOY_TOKEN: "t" } });
    expect(JSON.parse(withKey.stdout).skills.every((s: { eligible: boolean }) => s.eligible)).toBe(true);

    const unknown = await h.run(["skills", "list", "--agent", "nope"]);
    expect(unknown.code).toBe(EXIT.usage);
    expect(unknown.stderr).toContain('unknown agent "nope"');
  });

  it("lists the offered skills in the system prompt the model receives; a new skill waits for the next session", async () => {
    const weather = skill("weather", "name: weather\ndescription: Look up the weather");
    h.llm.clearRequests();
    h.llm.enqueue(reply("first"), reply("second"), reply("third"));
    expect((await h.run(["-m", "hi", "--session-key", "skills-a"])).code).toBe(EXIT.ok);
    const first = systemPromptOf(0);
    expect(first).toContain("## Skills");
    expect(first).toContain(
      `<name>weather</name>\n    <description>Look up the weather</description>\n    <location>${weather}</location>`,
    );
    expect(first).not.toContain("<name>deploy</name>");

    skill("notes", "description: Take notes");
    expect((await h.run(["-m", "again", "--session-key", "skills-a"])).code).toBe(EXIT.ok);
    expect(systemPromptOf(1)).not.toContain("<name>notes</name>");
    expect((await h.run(["-m", "new", "--session-key", "skills-b"])).code).toBe(EXIT.ok);
    expect(systemPromptOf(2)).toContain("<name>notes</name>");
  });
});

// The sandbox as the operator meets it, through the `agent` command as a subprocess: a sandboxed turn whose
// `exec` runs in bubblewrap, `runs show` printing where the tools ran, and `doctor` reporting the engine and
// warning about an agent whose non-owner sessions can run `exec` unsandboxed.
import { writeFileSync } from "node:fs";
import { reply, toolCall } from "@agent-kernel/fake-llm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliHarness, configText, createCliHarness } from "../test/cli-harness.ts";
import { EXIT } from "./exit-codes.ts";

let h: CliHarness;

function writeConfig(replace: (text: string) => string): void {
  writeFileSync(h.configPath, replace(configText(h.llm.baseUrlFor("openai"), h.workspaceDir)), {
    mode: 0o600,
  });
}

beforeAll(async () => {
  h = await createCliHarness();
});
afterAll(async () => {
  await h?.close();
});

describe("a sandboxed agent from the command line", () => {
  it("runs exec in the sandbox, and runs show and doctor say so", async () => {
    writeConfig((text) =>
      text.replace(
        '{ id: "main", default: true }',
        '{ id: "main", default: true, sandbox: { mode: "all" } }',
      ),
    );
    h.llm.enqueue(toolCall("exec", { command: "id -un; pwd; ls /" }), reply("Looked around."));
    const turn = await h.run(["-m", "look around", "--session-key", "boxed"]);
    expect(turn.code, turn.stderr).toBe(EXIT.ok);
    const toolResult = JSON.stringify(h.llm.requests.at(-1)?.body);
    expect(toolResult).toContain("sandbox\\n/workspace\\n");
    expect(toolResult).not.toContain(h.stateDir);

    const runs = JSON.parse((await h.run(["runs", "list", "--json"])).stdout) as { runId: string }[];
    const show = await h.run(["runs", "show", runs[0]?.runId ?? "?"]);
    expect(show.code).toBe(EXIT.ok);
    expect(show.stdout).toContain(
      'Sandbox: bwrap (mode all, scope agent "agent:main", workspace access none)',
    );
    expect(show.stdout).toMatch(/\/workspace\s+read-write\s+\S+\/sandboxes\/agent-main-[0-9a-f]{12}/);
    expect(show.stdout).toContain("network      off");

    const doctor = await h.run(["doctor"]);
    expect(doctor.code, doctor.stdout).toBe(EXIT.ok);
    expect(doctor.stdout).toMatch(
      /sandbox of agent main \(mode all\): bubblewrap [\d.]+, process limit by (cgroup|rlimit)/,
    );
    expect(doctor.stdout).toContain("no problems found");
  });

  it("doctor warns about non-owner sessions that can run exec unsandboxed", async () => {
    writeConfig((text) =>
      text
        .replace('tools: { profile: "coding" }', 'tools: { profile: "coding", nonOwnerHostTools: true }')
        .replace(
          "agents: {",
          'channels: { telegram: { botToken: "${TEST_BOT_TOKEN}", dmPolicy: "open", allowFrom: ["*"] } },\n  agents: {',
        ),
    );
    const doctor = await h.run(["doctor"], { env: { TEST_BOT_TOKEN: "123456:test" } });
    expect(doctor.stdout).toMatch(/warning: agent main: .*nonOwnerHostTools/);
  });
});

// `agent runs show` on subagent runs: a parent turn spawns a child through the kernel (pi's faux provider, real
// SQLite in the harness's state dir), then the CLI, as a subprocess, shows the parent naming its child run and
// the child naming its parent run — in text and in JSON.
import { parseConfig } from "@agent-kernel/config";
import { createKernelWithSubagents, openKernelStore } from "@agent-kernel/kernel";
import { fauxAssistantMessage, fauxProvider, fauxToolCall } from "@earendil-works/pi-ai";
import { afterEach, expect, it } from "vitest";
import { type CliHarness, createCliHarness } from "../test/cli-harness.ts";

let h: CliHarness | undefined;
afterEach(async () => {
  await h?.close();
});

/** Fills the state dir: one parent turn whose model spawns a subagent, the child's run and the announcement. */
async function spawnedRuns(harness: CliHarness): Promise<{ parentRunId: string; childRunId: string }> {
  const config = parseConfig(
    {
      store: { stateDir: harness.stateDir },
      models: {
        providers: {
          faux: {
            baseUrl: "http://127.0.0.1:9/v1",
            api: "openai-completions",
            models: [{ id: "faux-1", contextWindow: 100_000, maxTokens: 8192 }],
          },
        },
      },
      agents: { defaults: { model: "faux/faux-1", workspace: harness.workspaceDir } },
      tools: { profile: "coding" },
    },
    { env: {} },
  );
  const faux = fauxProvider({ provider: "faux", models: [{ id: "faux-1" }] });
  const store = await openKernelStore({ stateDir: harness.stateDir });
  try {
    const { kernel, subagents } = createKernelWithSubagents({
      config,
      store,
      nativeProviders: [faux.provider],
      paths: { env: {}, homeDir: harness.root, cwd: harness.root },
    });
    const replies = new Map<string, (() => ReturnType<typeof fauxAssistantMessage>)[]>([
      [
        "research it",
        [
          () =>
            fauxAssistantMessage(
              [fauxToolCall("sessions_spawn", { task: "find the answer" }, { id: "call_1" })],
              {
                stopReason: "toolUse",
              },
            ),
          () => fauxAssistantMessage("Asked a helper."),
        ],
      ],
      ["find the answer", [() => fauxAssistantMessage("The answer is 42.")]],
    ]);
    faux.setResponses(
      Array.from({ length: 100 }, () => (context: { messages: { role: string; content: unknown }[] }) => {
        const user = context.messages.findLast((message) => message.role === "user");
        const text =
          typeof user?.content === "string"
            ? user.content
            : ((user?.content ?? []) as { type: string; text?: string }[])
                .map((block) => block.text ?? "")
                .join("");
        return replies.get(text)?.shift()?.() ?? fauxAssistantMessage("Your helper found: 42.");
      }),
    );
    const parent = await kernel.executeTurn(await kernel.prepareSession({ sessionKey: "agent:main:main" }), {
      prompt: "research it",
    });
    await subagents.idle();
    const child = subagents.runs()[0];
    expect(child?.status).toBe("announced");
    return { parentRunId: parent.runId, childRunId: child?.runId ?? "" };
  } finally {
    await store.close();
  }
}

it("runs show names a subagent run's parent, and the parent's child, in text and JSON", async () => {
  h = await createCliHarness();
  const { parentRunId, childRunId } = await spawnedRuns(h);

  const child = await h.run(["runs", "show", childRunId]);
  expect(child.code, child.stderr).toBe(0);
  expect(child.stdout).toContain(`Run ${childRunId}`);
  expect(child.stdout).toContain("  entry point: subagent");
  expect(child.stdout).toMatch(/ {2}session: {5}agent:main:subagent:[0-9a-f-]{36} /);
  expect(child.stdout).toContain(`  parent run:  ${parentRunId}`);

  const parent = await h.run(["runs", "show", parentRunId]);
  expect(parent.code, parent.stderr).toBe(0);
  expect(parent.stdout).toMatch(
    new RegExp(
      `  child run: {3}${childRunId} \\(sessions_spawn → agent:main:subagent:[0-9a-f-]{36}, accepted\\)`,
    ),
  );

  const json = await h.run(["runs", "show", childRunId, "--json"]);
  expect(JSON.parse(json.stdout)).toMatchObject({
    run: { runId: childRunId, entryPoint: "subagent" },
    decisions: { parentRunId, defaults: { promptMode: "minimal" } },
  });
  const parentJson = JSON.parse((await h.run(["runs", "show", parentRunId, "--json"])).stdout);
  expect(parentJson.childRuns).toEqual([
    expect.objectContaining({ tool: "sessions_spawn", runId: childRunId, status: "accepted" }),
  ]);
}, 120_000);

// Subagents end to end through the kernel and pi's faux provider (real executor, real SQLite): a parent turn
// whose model calls sessions_spawn, the child run in its own `…:subagent:<uuid>` session with the minimal
// prompt and the subagent tool layer, its result announced back to the parent session; the depth limit; the
// subagent lane's cap; sessions_send into another session under the visibility rule; and the runs as
// `runs show` reads them (the child names its parent run, the parent's tool call names the child run).

import { formatToolDecision } from "@agent-kernel/tool-policy";
import type { Context, FauxResponseFactory } from "@earendil-works/pi-ai";
import { fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
import { afterEach, describe, expect, it } from "vitest";
import { createKernelHarness, Gate, type KernelHarness } from "../test/harness.ts";
import { showRun } from "./admin.ts";
import type { Kernel } from "./kernel.ts";
import { createKernelWithSubagents, type SubagentSettings, type Subagents } from "./subagents.ts";

let h: KernelHarness;
afterEach(async () => {
  await h?.close();
});

interface Setup {
  readonly kernel: Kernel;
  readonly subagents: Subagents;
  /** Every model request's context (system prompt, messages, tools), in call order. */
  readonly contexts: Context[];
}

async function setup(config: Record<string, unknown> = {}, settings: SubagentSettings = {}): Promise<Setup> {
  h = await createKernelHarness({ config });
  const { kernel, subagents } = createKernelWithSubagents(
    {
      config: h.config,
      store: h.store,
      nativeProviders: [h.faux.provider],
      paths: { env: {}, homeDir: h.root, cwd: h.root },
      executorSettings: { transientRetryDelayMs: 0 },
    },
    settings,
  );
  const contexts: Context[] = [];
  h.faux.setResponses(
    Array.from({ length: 10_000 }, () => (...args: Parameters<FauxResponseFactory>) => {
      contexts.push(structuredClone({ messages: args[0].messages }) as Context);
      return h.model.factory(...args);
    }),
  );
  return { kernel, subagents, contexts };
}

const toolCallMessage = (name: string, args: Parameters<typeof fauxToolCall>[1], id = "call_1") =>
  fauxAssistantMessage([fauxToolCall(name, args, { id })], { stopReason: "toolUse" });

/** The system prompt as the model got it (pi's request carries it as a system message with its sections). */
function systemText(context: Context | undefined): string {
  return (context?.messages ?? [])
    .filter((message) => (message.role as string) === "system")
    .map((message) => {
      const system = message as unknown as { content?: unknown; sections?: Record<string, unknown> };
      return [system.content, ...Object.values(system.sections ?? {})].map(String).join("\n");
    })
    .join("\n");
}
/** The tools the model was offered, as the system prompt's Tooling section lists them (policy-filtered). */
function toolNames(context: Context | undefined): string[] {
  const tooling = systemText(context).split("## Tooling")[1]?.split("\n## ")[0] ?? "";
  return [...tooling.matchAll(/^- ([a-z_]+): /gm)].map((match) => match[1] ?? "");
}
const lastUserText = (context: Context): string => {
  const user = context.messages.findLast((message) => message.role === "user");
  const content = user?.content;
  return typeof content === "string"
    ? content
    : (content ?? []).map((block) => (block.type === "text" ? block.text : "")).join("");
};

/** The JSON a tool answered with in a stored run (the first call of `name`). */
async function toolAnswer(runId: string, name: string): Promise<Record<string, unknown>> {
  const report = await showRun(h.store, runId);
  const call = report?.toolCalls.find((candidate) => candidate.name === name);
  expect(call?.text, `${name} result in run ${runId}`).toBeDefined();
  return JSON.parse(call?.text ?? "{}") as Record<string, unknown>;
}

describe("sessions_spawn", () => {
  it("runs the child through the kernel in its own subagent session, minimal prompt and subagent tools, and announces its result to the parent", async () => {
    const { kernel, subagents, contexts } = await setup();
    h.model
      .on("delegate the count", () =>
        toolCallMessage("sessions_spawn", { task: "count the files", label: "counter" }),
      )
      .on("delegate the count", () => fauxAssistantMessage("Started a helper."))
      .on("count the files", () => fauxAssistantMessage("There are 3 files."))
      .otherwise(() => fauxAssistantMessage("The helper counted 3 files."));
    const parentKey = "agent:main:main";
    const prepared = await kernel.prepareSession({ sessionKey: parentKey });
    const delivered: string[] = [];
    const parent = await kernel.executeTurn(prepared, {
      prompt: "delegate the count",
      delivery: {
        onFinal: (payloads) => void delivered.push(...payloads.map((payload) => payload.text ?? "")),
      },
    });
    expect(parent.status).toBe("ok");
    await subagents.idle();

    // The tool answered at once with the child's session key and run id.
    const accepted = await toolAnswer(parent.runId, "sessions_spawn");
    expect(accepted).toMatchObject({ status: "accepted" });
    const childKey = String(accepted.childSessionKey);
    const childRunId = String(accepted.runId);
    expect(childKey).toMatch(/^agent:main:subagent:[0-9a-f-]{36}$/);

    // The child: its own session (lineage stored), its run through the kernel naming the parent run.
    const childRow = await h.store.sessions.get({ agentId: "main", sessionKey: childKey });
    expect(childRow?.meta).toMatchObject({
      spawnedBy: parentKey,
      parentSessionKey: parentKey,
      spawnDepth: 1,
      subagentRole: "orchestrator",
      label: "counter",
    });
    const child = await showRun(h.store, childRunId);
    expect(child?.run).toMatchObject({ sessionKey: childKey, entryPoint: "subagent", status: "succeeded" });
    expect(child?.decisions?.parentRunId).toBe(parent.runId);
    expect(child?.decisions?.defaults.promptMode).toBe("minimal");
    // The subagent tool layer (by the key's depth) decides the spawn tools as every other tool, and the
    // run's recorded tool policy says so.
    expect(child?.decisions?.toolPolicy).toContain(
      'sessions_send: blocked by subagent(depth 1, orchestrator) — deny "sessions_send"',
    );
    const childPolicy = (await kernel.prepareSession({ sessionKey: childKey })).toolPolicy;
    expect(childPolicy.explain(["sessions_send", "sessions_spawn"]).map(formatToolDecision)).toEqual([
      'sessions_send: blocked by subagent(depth 1, orchestrator) — deny "sessions_send"',
      expect.stringMatching(/^sessions_spawn: allowed by /),
    ]);
    expect(child?.assistantMessages.at(-1)?.text).toBe("There are 3 files.");

    // What the child's model saw: the task alone, the subagent context, no message / sessions_send tools.
    const childContext = contexts.find((context) => lastUserText(context) === "count the files");
    expect(systemText(childContext)).toContain("# Subagent Context");
    expect(systemText(childContext)).toContain(`- Requester session: ${parentKey}`);
    expect(childContext?.messages.filter((message) => message.role === "user")).toHaveLength(1);
    expect(toolNames(childContext)).toContain("sessions_spawn");
    expect(toolNames(childContext)).not.toContain("sessions_send");
    expect(toolNames(childContext)).not.toContain("message");
    // The parent's own turn had the full prompt (no subagent context) and both tools.
    const parentContext = contexts.find((context) => lastUserText(context) === "delegate the count");
    expect(systemText(parentContext)).not.toContain("# Subagent Context");
    expect(toolNames(parentContext)).toEqual(expect.arrayContaining(["sessions_spawn", "sessions_send"]));

    // Announce-back: a run of the parent session whose prompt carries the child's findings.
    const [record] = subagents.runs();
    expect(record).toMatchObject({ runId: childRunId, parentRunId: parent.runId, status: "announced" });
    const parentRuns = await h.store.runs.listForSession({ agentId: "main", sessionKey: parentKey });
    expect(parentRuns.map((run) => run.runId).sort()).toEqual([parent.runId, record?.announceRunId].sort());
    const announceContext = contexts.find((context) => lastUserText(context).startsWith("A subagent task"));
    expect(lastUserText(announceContext as Context)).toContain(
      'A subagent task "counter" just completed successfully.\n\nFindings:\nThere are 3 files.',
    );
    // The parent session's history holds the whole exchange; the announcement reached the parent's channel.
    expect(announceContext?.messages.length).toBeGreaterThan(3);
    expect(delivered).toEqual(["Started a helper.", "The helper counted 3 files."]);
  });

  it("refuses a grandchild beyond maxSpawnDepth: the leaf has no sessions_spawn, and a direct spawn is forbidden", async () => {
    const { kernel, subagents, contexts } = await setup({
      agents: { defaults: { subagents: { maxSpawnDepth: 1 } } },
    });
    h.model
      .on("spawn one", () => toolCallMessage("sessions_spawn", { task: "spawn a grandchild" }))
      .on("spawn one", () => fauxAssistantMessage("spawned"))
      .on("spawn a grandchild", () => toolCallMessage("sessions_spawn", { task: "grandchild work" }))
      .on("spawn a grandchild", () => fauxAssistantMessage("could not"))
      .otherwise(() => fauxAssistantMessage("noted"));
    const parent = await kernel.executeTurn(await kernel.prepareSession({ sessionKey: "agent:main:main" }), {
      prompt: "spawn one",
    });
    await subagents.idle();
    const childRunId = String((await toolAnswer(parent.runId, "sessions_spawn")).runId);
    const child = await showRun(h.store, childRunId);
    // The leaf's tool layer removed sessions_spawn: the model's call fails, nothing is spawned.
    expect(child?.decisions?.toolPolicy.find((line) => line.startsWith("sessions_spawn:"))).toMatch(
      /^sessions_spawn: blocked by subagent\(depth 1, leaf\)/,
    );
    const leafPolicy = (await kernel.prepareSession({ sessionKey: child?.run.sessionKey ?? "" })).toolPolicy;
    expect(formatToolDecision(leafPolicy.explain(["sessions_spawn"])[0] as never)).toMatch(
      /^sessions_spawn: blocked by subagent\(depth 1, leaf\)/,
    );
    expect(
      toolNames(contexts.find((context) => lastUserText(context) === "spawn a grandchild")),
    ).not.toContain("sessions_spawn");
    expect(child?.toolCalls).toEqual([expect.objectContaining({ name: "sessions_spawn", isError: true })]);
    expect(subagents.runs()).toHaveLength(1);
    expect(h.model.calls).not.toContain("grandchild work");
    const keys = (await h.store.sessions.list("main")).map((session) => session.sessionKey);
    expect(keys.filter((key) => key.includes(":subagent:"))).toHaveLength(1);

    // The spawner itself refuses at the limit, whatever the tool list says.
    const childKey = child?.run.sessionKey ?? "";
    const answer = await subagents.spawn(
      {
        prepared: await kernel.prepareSession({ sessionKey: childKey }),
        turn: { prompt: "x" },
        runId: childRunId,
      },
      { task: "grandchild work" },
    );
    expect(answer).toEqual({
      status: "forbidden",
      error: "sessions_spawn is not allowed at this depth (current depth: 1, max: 1)",
    });
  });

  it("runs the child on agents.defaults.subagents.model when set", async () => {
    const { kernel, subagents } = await setup({
      agents: { defaults: { subagents: { model: "faux/faux-2" } } },
    });
    h.model
      .on("spawn one", () => toolCallMessage("sessions_spawn", { task: "cheap work" }))
      .on("spawn one", () => fauxAssistantMessage("spawned"))
      .otherwise(() => fauxAssistantMessage("done"));
    const parent = await kernel.executeTurn(await kernel.prepareSession({ sessionKey: "agent:main:main" }), {
      prompt: "spawn one",
    });
    await subagents.idle();
    expect(parent.result.model).toBe("faux-1");
    const child = await h.store.runs.get(subagents.runs()[0]?.runId ?? "");
    expect(child).toMatchObject({ entryPoint: "subagent", model: "faux-2" });
  });

  it("is not offered where the tool policy denies it (tools.deny), and a call of it fails without spawning", async () => {
    const { kernel, subagents, contexts } = await setup({ tools: { deny: ["sessions_spawn"] } });
    h.model
      .on("spawn one", () => toolCallMessage("sessions_spawn", { task: "never runs" }))
      .on("spawn one", () => fauxAssistantMessage("could not"));
    const parent = await kernel.executeTurn(await kernel.prepareSession({ sessionKey: "agent:main:main" }), {
      prompt: "spawn one",
    });
    await subagents.idle();
    const report = await showRun(h.store, parent.runId);
    expect(report?.decisions?.toolPolicy.find((line) => line.startsWith("sessions_spawn:"))).toMatch(
      /^sessions_spawn: blocked by tools\.deny/,
    );
    expect(toolNames(contexts[0])).not.toContain("sessions_spawn");
    expect(toolNames(contexts[0])).toContain("sessions_send");
    expect(report?.toolCalls).toEqual([expect.objectContaining({ name: "sessions_spawn", isError: true })]);
    expect(subagents.runs()).toEqual([]);
    expect(h.model.calls).not.toContain("never runs");
  });

  it("nests a grandchild's key under its parent's within the depth limit", async () => {
    const { kernel, subagents } = await setup({ agents: { defaults: { subagents: { maxSpawnDepth: 2 } } } });
    h.model
      .on("spawn one", () => toolCallMessage("sessions_spawn", { task: "spawn a grandchild" }))
      .on("spawn one", () => fauxAssistantMessage("spawned"))
      .on("spawn a grandchild", () => toolCallMessage("sessions_spawn", { task: "grandchild work" }))
      .on("spawn a grandchild", () => fauxAssistantMessage("spawned mine"))
      .otherwise(() => fauxAssistantMessage("done"));
    await kernel.executeTurn(await kernel.prepareSession({ sessionKey: "agent:main:main" }), {
      prompt: "spawn one",
    });
    await subagents.idle();
    const [child, grandchild] = subagents.runs();
    expect(grandchild?.childSessionKey).toMatch(
      new RegExp(`^${child?.childSessionKey}:subagent:[0-9a-f-]{36}$`),
    );
    expect(grandchild).toMatchObject({ depth: 2, parentRunId: child?.runId, status: "announced" });
    const row = await h.store.sessions.get({
      agentId: "main",
      sessionKey: grandchild?.childSessionKey ?? "",
    });
    expect(row?.meta).toMatchObject({ spawnDepth: 2, subagentRole: "leaf" });
  });

  it("holds subagent runs beyond the lane's cap until one ends", async () => {
    const { kernel, subagents } = await setup({}, { maxConcurrent: 1 });
    const gate = new Gate("first done");
    h.model
      .on("spawn two", () =>
        fauxAssistantMessage(
          [
            fauxToolCall("sessions_spawn", { task: "first task" }, { id: "call_1" }),
            fauxToolCall("sessions_spawn", { task: "second task" }, { id: "call_2" }),
          ],
          { stopReason: "toolUse" },
        ),
      )
      .on("spawn two", () => fauxAssistantMessage("both started"))
      .on("first task", gate.handler)
      .on("second task", () => fauxAssistantMessage("second done"))
      .otherwise(() => fauxAssistantMessage("noted"));
    const parent = await kernel.executeTurn(await kernel.prepareSession({ sessionKey: "agent:main:main" }), {
      prompt: "spawn two",
    });
    expect(parent.status).toBe("ok");
    await gate.started;
    expect(subagents.laneStats()).toEqual({ maxConcurrent: 1, running: 1, queued: 1 });
    expect(h.model.calls).not.toContain("second task");
    gate.release();
    await subagents.idle();
    expect(h.model.calls.indexOf("second task")).toBeGreaterThan(h.model.calls.indexOf("first task"));
    expect(subagents.runs().map((run) => run.status)).toEqual(["announced", "announced"]);
    expect(subagents.laneStats()).toEqual({ maxConcurrent: 1, running: 0, queued: 0 });
  });
});

describe("the tools of a session's turns", () => {
  it("are the same objects for every turn of a preparation (the session stays warm), acting for the turn running now", async () => {
    const { kernel, subagents } = await setup();
    h.model.otherwise(() => fauxAssistantMessage("done"));
    const prepared = await kernel.prepareSession({ sessionKey: "agent:main:main" });
    const first = subagents.turnTools({ prepared, turn: { prompt: "a" }, runId: "run-a" });
    const second = subagents.turnTools({ prepared, turn: { prompt: "b" }, runId: "run-b" });
    expect(second).toBe(first);
    expect(first.map((tool) => tool.name)).toEqual(["sessions_spawn", "sessions_send"]);
    const spawn = first[0];
    await spawn?.execute("call_1", { task: "child work" } as never, undefined, undefined, undefined as never);
    await subagents.idle();
    expect(subagents.runs()[0]?.parentRunId).toBe("run-b");
  });
});

describe("sessions_send", () => {
  it("delivers a message into another session of the agent (visibility agent) and returns its reply", async () => {
    const { kernel, subagents } = await setup({}, { visibility: "agent" });
    const otherKey = "agent:main:other";
    h.model.on("hello other", () => fauxAssistantMessage("hi"));
    await kernel.executeTurn(await kernel.prepareSession({ sessionKey: otherKey }), {
      prompt: "hello other",
    });
    h.model
      .on("ask the other session", () =>
        toolCallMessage("sessions_send", { sessionKey: otherKey, message: "ping from main" }),
      )
      .on("ask the other session", () => fauxAssistantMessage("It said pong."))
      .on("ping from main", () => fauxAssistantMessage("pong"));
    const sender = await kernel.executeTurn(await kernel.prepareSession({ sessionKey: "agent:main:main" }), {
      prompt: "ask the other session",
    });
    await subagents.idle();
    const answer = await toolAnswer(sender.runId, "sessions_send");
    expect(answer).toMatchObject({ status: "ok", sessionKey: otherKey, reply: "pong" });
    const received = await showRun(h.store, String(answer.runId));
    expect(received?.run).toMatchObject({
      sessionKey: otherKey,
      entryPoint: "sessions_send",
      status: "succeeded",
    });
    expect(received?.decisions?.parentRunId).toBe(sender.runId);
    // The other session's transcript now holds the message and its reply after its earlier turn.
    expect((await h.store.runs.listForSession({ agentId: "main", sessionKey: otherKey })).length).toBe(2);
  });

  it("refuses a session outside this session's tree (default visibility), the current session and an unknown one", async () => {
    const { kernel, subagents } = await setup();
    h.model.on("hello other", () => fauxAssistantMessage("hi"));
    await kernel.executeTurn(await kernel.prepareSession({ sessionKey: "agent:main:other" }), {
      prompt: "hello other",
    });
    const caller = {
      prepared: await kernel.prepareSession({ sessionKey: "agent:main:main" }),
      turn: { prompt: "x" },
      runId: "caller-run",
    };
    expect(await subagents.send(caller, { sessionKey: "agent:main:other", message: "hi" })).toMatchObject({
      status: "forbidden",
      error: expect.stringContaining("not in this session's tree"),
    });
    expect(await subagents.send(caller, { sessionKey: "main", message: "hi" })).toMatchObject({
      status: "forbidden",
      error: "sessions_send cannot send to the current session",
    });
    expect(await subagents.send(caller, { sessionKey: "agent:ops:main", message: "hi" })).toMatchObject({
      status: "forbidden",
      error: expect.stringContaining('belongs to agent "ops"'),
    });
    // Nothing ran in the other session.
    expect(h.model.calls).toEqual(["hello other"]);
  });

  it("reaches a subagent this session spawned (tree), its reply returned", async () => {
    const { kernel, subagents } = await setup();
    h.model
      .on("spawn a helper", () => toolCallMessage("sessions_spawn", { task: "wait for orders" }))
      .on("spawn a helper", () => fauxAssistantMessage("spawned"))
      .on("wait for orders", () => fauxAssistantMessage("ready"))
      .on("now report", () => fauxAssistantMessage("reporting: all good"))
      .otherwise(() => fauxAssistantMessage("noted"));
    const prepared = await kernel.prepareSession({ sessionKey: "agent:main:main" });
    const parent = await kernel.executeTurn(prepared, { prompt: "spawn a helper" });
    await subagents.idle();
    const childKey = subagents.runs()[0]?.childSessionKey ?? "";
    const answer = await subagents.send(
      { prepared, turn: { prompt: "x" }, runId: parent.runId },
      { sessionKey: childKey, message: "now report" },
    );
    expect(answer).toMatchObject({ status: "ok", sessionKey: childKey, reply: "reporting: all good" });
  });
});

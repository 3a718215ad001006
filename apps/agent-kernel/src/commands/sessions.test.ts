// `agent-kernel sessions reset|delete` after real turns (tooling/fake-llm, real SQLite): reset starts the
// session over under a new session id (the next turn's transcript is empty), delete removes it; an unknown
// session is exit 3.
import { reply } from "@agent-kernel/fake-llm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../../test/harness.ts";
import { EXIT } from "../errors.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
}, 60_000);
afterAll(async () => {
  await h?.close();
});

const sessionId = async (key: string) =>
  JSON.parse((await h.run(["sessions", "show", key, "--json"])).stdout).session.sessionId as string;

describe("agent-kernel sessions", () => {
  it("reset gives the main session a new session id; the next turn starts with no history", async () => {
    h.llm.enqueue(reply("first answer"));
    expect((await h.run(["agent", "-m", "remember this"])).code).toBe(EXIT.ok);
    const before = await sessionId("main");

    const reset = await h.run(["sessions", "reset", "main", "--json"]);
    expect(reset.stderr).toBe("");
    expect(reset.code).toBe(EXIT.ok);
    const answer = JSON.parse(reset.stdout);
    expect(answer).toMatchObject({ sessionKey: "agent:main:main", previousSessionId: before });
    expect(answer.sessionId).not.toBe(before);
    expect(await sessionId("main")).toBe(answer.sessionId);

    h.llm.enqueue(reply("fresh"));
    expect((await h.run(["agent", "-m", "who am I?"])).code).toBe(EXIT.ok);
    const sent = h.llm.requests.at(-1)?.body as { messages: { role: string }[] };
    expect(sent.messages.filter((message) => message.role === "user")).toHaveLength(1);
  }, 120_000);

  it("delete removes the session; a second delete and an unknown session are exit 3", async () => {
    h.llm.enqueue(reply("scratch answer"));
    expect((await h.run(["agent", "-m", "scratch", "--session-key", "scratch"])).code).toBe(EXIT.ok);
    const deleted = await h.run(["sessions", "delete", "scratch"]);
    expect(deleted.code).toBe(EXIT.ok);
    expect(deleted.stdout).toMatch(
      /^Session agent:main:scratch \(.+\) deleted; its runs stay readable by run id\.\n$/,
    );
    expect((await h.run(["sessions", "show", "scratch"])).code).toBe(EXIT.notFound);
    const again = await h.run(["sessions", "delete", "scratch"]);
    expect(again.code).toBe(EXIT.notFound);
    expect(again.stderr).toBe('agent-kernel: no session "scratch". See: agent-kernel sessions list\n');
  }, 120_000);
});

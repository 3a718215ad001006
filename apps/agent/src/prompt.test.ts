// `agent runs show <runId> --prompt`: the system prompt read back from the transcript is, byte for byte, the one
// the model received (tooling/fake-llm records the request) and the one the run hashed.
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { reply } from "@agent-kernel/fake-llm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliHarness, createCliHarness } from "../test/cli-harness.ts";
import { EXIT } from "./exit-codes.ts";

let h: CliHarness;
beforeAll(async () => {
  h = await createCliHarness();
});
afterAll(async () => {
  await h?.close();
});

/** The system prompt of the fake LLM's request `index` (OpenAI wire: the first message). */
function sentSystemPrompt(index: number): string {
  const body = h.llm.requests[index]?.body as { messages?: { role: string; content: unknown }[] } | null;
  const system = body?.messages?.find((message) => message.role === "system" || message.role === "developer");
  const content = system?.content;
  if (typeof content === "string") return content;
  return Array.isArray(content) ? content.map((part: { text?: string }) => part.text ?? "").join("") : "";
}

describe("agent runs show --prompt", () => {
  it("prints exactly the system prompt the model received, and its hash matches the run's", async () => {
    writeFileSync(join(h.workspaceDir, "AGENTS.md"), "# House rules\nBe brief.\n");
    h.llm.enqueue(reply("done"));
    const turn = await h.run(["-m", "hello", "--session-key", "prompted", "--json"]);
    expect(turn.code).toBe(EXIT.ok);
    const runId = (JSON.parse(turn.stdout) as { runId: string }).runId;
    const sent = sentSystemPrompt(h.llm.requests.length - 1);
    expect(sent).toContain("## Tooling");

    const shown = await h.run(["runs", "show", runId, "--prompt"]);
    expect(shown.code).toBe(EXIT.ok);
    expect(shown.stdout).toBe(`${sent}\n`);
    expect(shown.stdout).toContain("Be brief.");
    expect(shown.stderr).toBe("");

    const json = JSON.parse((await h.run(["runs", "show", runId, "--prompt", "--json"])).stdout) as {
      hash: string;
      recordedHashes: string[];
      matches: boolean;
    };
    expect(json.hash).toBe(createHash("sha256").update(sent).digest("hex"));
    expect(json.recordedHashes).toEqual([json.hash]);
    expect(json.matches).toBe(true);

    const missing = await h.run(["runs", "show", "no-such-run", "--prompt"]);
    expect(missing.code).toBe(EXIT.notFound);
  });
});

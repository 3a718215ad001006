// A session continued in a new process sends the model the same context it would have sent without the
// restart: the fake server's recorded request bodies of the second turn are compared byte for byte (after
// replacing each run's temp root). The child runs with an empty HOME that must stay empty: the executor
// never touches ~/.pi.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeLlm, reply, startFakeLlm } from "@agent-kernel/fake-llm";
import { afterEach, describe, expect, it } from "vitest";
import { executeTurn } from "../../src/executor/index.ts";
import { createHarness } from "./harness.ts";
import { wireConfig } from "./wire-config.ts";

function runChild(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += String(chunk)));
    child.stderr.on("data", (chunk) => (stderr += String(chunk)));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

const CHILD = join(import.meta.dirname, "continue-turn.ts");
const SESSION_KEY = "agent:main:restart";
const SESSION_ID = "restart-session";
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

describe.each(["openai", "anthropic"] as const)("restart over %s wire", (wire) => {
  it("the continued turn sends the same request body with or without a process restart", async () => {
    const llm: FakeLlm = await startFakeLlm();
    cleanup.push(() => llm.close());
    const baseUrl = llm.baseUrlFor(wire);
    llm.enqueue(
      reply("First answer."),
      reply("Second answer."),
      reply("First answer."),
      reply("Second answer."),
    );
    const turn = (prompt: string) => ({ prompt, timeoutMs: 30_000, entryPoint: "agent" });

    // Without a restart: both turns in this process.
    const rootA = mkdtempSync(join(tmpdir(), "restart-a-"));
    cleanup.push(() => rmSync(rootA, { recursive: true, force: true }));
    const inProcess = await createHarness({ root: rootA, config: wireConfig(wire, baseUrl) });
    const contextA = await inProcess.context(SESSION_KEY, { sessionId: SESSION_ID });
    expect((await executeTurn(contextA, turn("Remember the word teal."))).status).toBe("ok");
    expect((await executeTurn(contextA, turn("Which word?"))).status).toBe("ok");
    await inProcess.close();

    // With a restart: the first turn here, the second in a new process with an empty HOME.
    const rootB = mkdtempSync(join(tmpdir(), "restart-b-"));
    cleanup.push(() => rmSync(rootB, { recursive: true, force: true }));
    const first = await createHarness({ root: rootB, config: wireConfig(wire, baseUrl) });
    const contextB = await first.context(SESSION_KEY, { sessionId: SESSION_ID });
    expect((await executeTurn(contextB, turn("Remember the word teal."))).status).toBe("ok");
    await first.close();
    const home = join(rootB, "home");
    mkdirSync(home);
    // Asynchronous: the fake server answering the child lives in this process's event loop.
    const child = await runChild(
      [
        "--conditions=@agent-kernel/source",
        "--no-warnings",
        CHILD,
        rootB,
        wire,
        baseUrl,
        SESSION_KEY,
        "Which word?",
      ],
      { ...process.env, HOME: home, PI_OFFLINE: "1" },
    );
    expect(child.stderr).toBe("");
    expect(child.status).toBe(0);
    expect(JSON.parse(child.stdout)).toEqual({ status: "ok", text: "Second answer.", sessionId: SESSION_ID });
    expect(readdirSync(home)).toEqual([]);

    expect(llm.requests).toHaveLength(4);
    const body = (index: number, root: string) => llm.requests[index]?.rawBody.split(root).join("<root>");
    expect(body(3, rootB)).toBe(body(1, rootA));
    expect(body(3, rootB)).toContain("Remember the word teal.");
    expect(body(3, rootB)).toContain("First answer.");
  }, 60_000);
});

// The `fake-llm` command as the demo runs it: a child process serving the example scenario, answering real
// requests, and exiting 0 on SIGTERM; bad input exits non-zero with a clear message.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const CLI = join(import.meta.dirname, "cli.ts");
const EXAMPLE = join(import.meta.dirname, "..", "examples", "demo.json");

function run(args: string[]) {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = once(child, "exit").then(([code]) => code as number | null);
  return { child, exited, out: () => stdout, err: () => stderr };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe("fake-llm CLI", () => {
  it("serves a scenario file, logs each request and exits 0 on SIGTERM", async () => {
    const cli = run(["--scenario", EXAMPLE]);
    await until(() => cli.out().includes("anthropic-messages baseUrl"));
    const openaiBase = /openai-completions baseUrl: (\S+)/.exec(cli.out())?.[1] ?? "";
    const limited = await fetch(`${openaiBase}/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer sk-AAAA" },
      body: JSON.stringify({ model: "m", messages: [] }),
    });
    expect(limited.status).toBe(429);
    const answered = await fetch(`${openaiBase}/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer sk-BBBB" },
      body: JSON.stringify({ model: "m", messages: [] }),
    });
    expect(await answered.json()).toMatchObject({ choices: [{ finish_reason: "tool_calls" }] });
    await until(() => cli.out().includes("#1 "));
    cli.child.kill("SIGTERM");
    expect(await cli.exited).toBe(0);
    expect(cli.out()).toContain(
      "#0 POST /v1/chat/completions model=m key …AAAA → error:rate_limit (profile-a-rate-limited)",
    );
    expect(cli.out()).toContain("#1 POST /v1/chat/completions model=m key …BBBB → response");
    expect(cli.out()).toContain("fake-llm closed after 2 request(s)");
  });

  it("rejects a bad scenario file and a bad port with a clear message", async () => {
    const missing = run(["--scenario", join(import.meta.dirname, "no-such.json")]);
    expect(await missing.exited).toBe(1);
    expect(missing.err()).toContain("no-such.json");
    const badPort = run(["--port", "http"]);
    expect(await badPort.exited).toBe(2);
    expect(badPort.err()).toContain('--port must be an integer 0–65535 (got "http")');
  });
});

// Child process of the restart test: continues a session from the state dir alone (nothing shared with the
// parent but the files and the fake server's URL) with one executor turn, and prints one JSON line.
// Run: node --conditions=@agent-kernel/source continue-turn.ts <root> <wire> <baseUrl> <sessionKey> <prompt>
import type { WireProvider } from "@agent-kernel/fake-llm";
import { executeTurn } from "../../src/executor/index.ts";
import { createHarness } from "./harness.ts";
import { wireConfig } from "./wire-config.ts";

const [root, wire, baseUrl, sessionKey, prompt] = process.argv.slice(2);
if (!root || !wire || !baseUrl || !sessionKey || !prompt)
  throw new Error("usage: continue-turn.ts <root> <wire> <baseUrl> <sessionKey> <prompt>");

const harness = await createHarness({ root, config: wireConfig(wire as WireProvider, baseUrl) });
const context = await harness.context(sessionKey);
const result = await executeTurn(context, { prompt, timeoutMs: 30_000, entryPoint: "agent" });
process.stdout.write(
  `${JSON.stringify({ status: result.status, text: result.assistantText, sessionId: context.sessionId })}\n`,
);
await harness.close();

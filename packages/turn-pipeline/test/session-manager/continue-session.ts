// Child process of the adapter's end-to-end test: reopens a session from SQLite alone (nothing shared with the
// parent but the state dir), reports the context the model receives, continues the conversation with one
// faux turn, and prints one JSON line for the parent. Run: node --conditions=@agent-kernel/source
// continue-session.ts <stateDir> <agentId> <sessionId> <cwd>
import { openSessionStore } from "@agent-kernel/session-store";
import { fauxAssistantMessage } from "@earendil-works/pi-ai";
import { openPiSessionManager, thinkingLevelForCreate } from "../../src/session-manager/index.ts";
import { hermeticRuntime, hermeticSession } from "./hermetic.ts";

const [stateDir, agentId, sessionId, cwd] = process.argv.slice(2);
if (!stateDir || !agentId || !sessionId || !cwd)
  throw new Error("usage: continue-session.ts <stateDir> <agentId> <sessionId> <cwd>");

const store = await openSessionStore({ stateDir });
const binding = openPiSessionManager(store, { agentId, sessionId, cwd });
const runtime = await hermeticRuntime();
const session = await hermeticSession(runtime, {
  sessionManager: binding.sessionManager,
  cwd,
  agentDir: `${stateDir}/pi-agent-dir-unused`,
  // The parent asked for "low"; the transcript records it, so pi restores it and no explicit level is passed.
  thinkingLevel: thinkingLevelForCreate(binding, "low"),
});

let seenByModel: { role: string; text: string }[] = [];
runtime.faux.setResponses([
  (context) => {
    seenByModel = context.messages.map((message) => ({ role: message.role, text: textOf(message.content) }));
    return fauxAssistantMessage("Continuing after the restart.");
  },
]);
const contextBeforeTurn = binding.sessionManager
  .buildSessionContext()
  .messages.map((message) => message.role);
await session.prompt("And tomorrow?");

process.stdout.write(
  `${JSON.stringify({
    isNew: binding.isNew,
    storedThinkingLevel: binding.storedThinkingLevel ?? null,
    agentThinkingLevel: session.thinkingLevel,
    systemPrompt: session.systemPrompt,
    contextBeforeTurn,
    seenByModel,
    answer: session.getLastAssistantText() ?? null,
    leafId: binding.transcript.getLeafId(),
  })}\n`,
);
session.dispose();
await store.close();

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block: { type?: string; text?: string }) =>
      block.type === "text" ? (block.text ?? "") : `[${block.type}]`,
    )
    .join("");
}

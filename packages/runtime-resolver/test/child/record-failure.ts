// A separate process that records one auth-profile failure in the shared
// session store, then exits: argv = stateDir agentId profileId reason now modelId.
import { openSessionStore } from "@agent-kernel/session-store";
import { recordProfileFailure } from "../../src/auth-state.ts";
import type { FailoverReason } from "../../src/classify-error.ts";

const [stateDir, agentId, profileId, reason, now, modelId] = process.argv.slice(2);
if (!stateDir || !agentId || !profileId || !reason || !now)
  throw new Error("usage: stateDir agentId profileId reason now [modelId]");
const store = await openSessionStore({ stateDir });
try {
  const written = await recordProfileFailure(store.auth, {
    agentId,
    profileId,
    reason: reason as FailoverReason,
    now: Number(now),
    modelId: modelId || undefined,
  });
  process.stdout.write(`${JSON.stringify(written)}\n`);
} finally {
  await store.close();
}

// How the follow-up runner asks the kernel about a session: the prepare call (entry point `followup`), the
// routing fields a stored message carries into it, and the queue settings that apply (the kernel's
// resolution plus the config's debounce). Owns: those three translations. Does not own: the resolution
// order itself (the kernel) or what is done with the settings (runner.ts).
import { QUEUE_DEFAULTS } from "@agent-kernel/config";
import type { Kernel, PreparedSession } from "@agent-kernel/kernel";
import type { InboundMessage, MessagePayload } from "./inbound.ts";
import type { FollowupSettings } from "./runner-types.ts";

/** The routing fields of a stored message, as prepare input. */
export function routingOf(payload: Pick<MessagePayload, "messageContext" | "queueMode">) {
  return {
    ...(payload.messageContext === undefined ? {} : { messageContext: payload.messageContext }),
    ...(payload.queueMode === undefined ? {} : { queueMode: payload.queueMode }),
  };
}

export function prepareFollowup(kernel: Kernel, inbound: InboundMessage): Promise<PreparedSession> {
  return kernel.prepareSession({
    ...(inbound.agentId === undefined ? {} : { agentId: inbound.agentId }),
    ...(inbound.sessionKey === undefined ? {} : { sessionKey: inbound.sessionKey }),
    ...(inbound.messageContext === undefined ? {} : { messageContext: inbound.messageContext }),
    runOptions: {
      entryPoint: "followup",
      useSessionContextTokens: true,
      ...(inbound.queueMode === undefined ? {} : { queueMode: inbound.queueMode }),
    },
  });
}

/**
 * The kernel's resolution (inline → session → `byChannel` → `messages.queue` → defaults). The kernel, like
 * OpenClaw, does not read `messages.queue.debounceMs` (only the session's and `debounceMsByChannel`); this
 * runner does, when nothing more specific set the window.
 */
export function settingsOf(prepared: PreparedSession): FollowupSettings {
  const queue = prepared.runtimeContext.queue;
  const configured = prepared.config.messages.queue.debounceMs;
  return {
    mode: queue.mode,
    debounceMs: queue.debounceMs === QUEUE_DEFAULTS.debounceMs ? configured : queue.debounceMs,
    cap: queue.cap,
    dropPolicy: queue.dropPolicy,
  };
}

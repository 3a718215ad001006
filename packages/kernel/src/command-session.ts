// The `agent` command's session selection and its persisted per-session settings, as kernel rules so the CLI
// stays IO only (openclaw-behaviors §12, the `agent` column). Owns: turning `--agent`, `--session-key`,
// `--session-id` and `--to` into a `SessionKernelInput` (a known agent, the key's agent matching it, a
// sessionId found in the store naming its key, `--to` as a direct peer under `session.dmScope`), and
// persisting `--thinking` (`off` deletes it) and `--verbose` to the session before the run. Does not own:
// resolving the rest of the run (prepare.ts) or the flags themselves (the app).
import type { KernelConfig } from "@agent-kernel/config";
import {
  buildAgentPeerSessionKey,
  isClearThinkingDirective,
  normalizeThinkLevel,
  type PathOptions,
  resolveSessionIdentity,
  SessionIdentityError,
  THINK_LEVELS,
} from "@agent-kernel/runtime-resolver";
import type { SessionMetaPatch, SessionStore } from "@agent-kernel/session-store";
import type { SessionKernelInput } from "./types.ts";

/** The selection or a setting cannot be used (unknown agent, key of another agent, bad level). */
export class CommandSessionError extends Error {
  override readonly name = "CommandSessionError";
}

export interface CommandSessionFlags {
  readonly agentId?: string | undefined;
  readonly sessionKey?: string | undefined;
  readonly sessionId?: string | undefined;
  /** The recipient: a direct peer on the `cli` channel, recorded as the session's last route. */
  readonly to?: string | undefined;
  readonly workspaceDir?: string | undefined;
}

export interface CommandSessionDeps {
  readonly config: KernelConfig;
  readonly store: SessionStore;
  readonly paths?: PathOptions | undefined;
}

export const COMMAND_CHANNEL = "cli";

/**
 * The session a CLI turn runs in. `--session-key` wins; else a `--session-id` known to the store runs under
 * that session's key (an unknown one starts on the agent's main key); else `--to` picks the peer's key by
 * `session.dmScope` (the main key under the default `main` scope); else the agent's main session.
 */
export async function resolveCommandSession(
  deps: CommandSessionDeps,
  flags: CommandSessionFlags,
): Promise<SessionKernelInput> {
  try {
    const base = resolveSessionIdentity(
      deps.config,
      { agentId: flags.agentId, sessionKey: flags.sessionKey },
      deps.paths ?? {},
    );
    let sessionKey = flags.sessionKey?.trim() ? base.sessionKey : undefined;
    const sessionId = flags.sessionId?.trim() || undefined;
    if (sessionKey === undefined && sessionId !== undefined) {
      sessionKey = (await deps.store.sessions.getBySessionId(base.agentId, sessionId))?.sessionKey;
    }
    const to = flags.to?.trim() || undefined;
    if (sessionKey === undefined && to !== undefined) {
      sessionKey = buildAgentPeerSessionKey({
        agentId: base.agentId,
        mainKey: deps.config.session.mainKey,
        channel: COMMAND_CHANNEL,
        peerKind: "direct",
        peerId: to,
        dmScope: deps.config.session.dmScope,
      });
    }
    // Resolving again validates the final key against the agent.
    const identity = resolveSessionIdentity(
      deps.config,
      { agentId: base.agentId, sessionKey: sessionKey ?? base.sessionKey },
      deps.paths ?? {},
    );
    return {
      agentId: identity.agentId,
      sessionKey: identity.sessionKey,
      ...(sessionId === undefined ? {} : { sessionId }),
      ...(flags.workspaceDir === undefined ? {} : { workspaceDir: flags.workspaceDir }),
      messageContext: {
        channel: COMMAND_CHANNEL,
        chatType: "direct",
        senderIsOwner: true,
        ...(to === undefined ? {} : { to }),
      },
    };
  } catch (error) {
    if (error instanceof SessionIdentityError) throw new CommandSessionError(error.message);
    throw error;
  }
}

export interface CommandSessionSettings {
  /** `--thinking`: stored on the session; `off` (or `default`, `clear`) removes the stored level. */
  readonly thinking?: string | undefined;
  /** `--verbose`: stored as the session's verbose level. */
  readonly verbose?: string | undefined;
}

/** A thinking level as given on the command line, or a clear error listing the accepted ones. */
export function parseThinkingFlag(raw: string, flag: string): string | null {
  const trimmed = raw.trim().toLowerCase();
  if (trimmed === "off" || isClearThinkingDirective(trimmed)) return null;
  const level = normalizeThinkLevel(trimmed);
  if (level === undefined) {
    throw new CommandSessionError(`${flag} "${raw}" is not a thinking level (${THINK_LEVELS.join(", ")})`);
  }
  return level;
}

/** Persists the settings on the (created if new) session row before the turn resolves its runtime. */
export async function persistCommandSettings(
  deps: CommandSessionDeps,
  session: SessionKernelInput,
  settings: CommandSessionSettings,
): Promise<void> {
  const patch: { -readonly [K in keyof SessionMetaPatch]: SessionMetaPatch[K] } = {};
  if (settings.thinking !== undefined)
    patch.thinkingLevel = parseThinkingFlag(settings.thinking, "--thinking");
  if (settings.verbose !== undefined) patch.verboseLevel = settings.verbose;
  if (Object.keys(patch).length === 0) return;
  const identity = resolveSessionIdentity(deps.config, session, deps.paths ?? {});
  const ref = { agentId: identity.agentId, sessionKey: identity.sessionKey };
  const existing = await deps.store.sessions.get(ref);
  if (existing === undefined) {
    await deps.store.sessions.ensure({
      ...ref,
      ...(session.sessionId === undefined ? {} : { sessionId: session.sessionId }),
    });
  }
  await deps.store.sessions.patch(ref, patch);
}

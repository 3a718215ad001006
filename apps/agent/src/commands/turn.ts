// `agent -m <text>`: one turn through the kernel. Owns the IO of a turn: picking the session from the flags
// (through the kernel's command-session rules), persisting `--thinking`/`--verbose`, streaming partial text
// to a terminal as it arrives, printing the final text or the `TurnOutcome` as JSON, `--verbose` diagnostics
// on stderr, and the exit code — 5 with the store's own words (the file, the row, what to do) when the store
// failed the turn, a reply produced before that still shown (it was paid for) and said to be unstored. Does
// not own any turn logic (the kernel).
import { randomUUID } from "node:crypto";
import {
  type AnyKernelStore,
  CommandSessionError,
  createKernel,
  KernelInputError,
  openKernelStore,
  parseThinkingFlag,
  persistCommandSettings,
  resolveCommandSession,
  type SessionKernelInput,
  STORAGE_REASON,
  TurnNotRecordedError,
  type TurnOutcome,
} from "@agent-kernel/kernel";
import type { CommandContext } from "../context.ts";
import { CliError, EXIT, type ExitCode } from "../exit-codes.ts";
import type { ImageInput } from "../image-files.ts";
import { type CliIo, line, paint } from "../io.ts";
import { recoveryLines } from "./recovery-lines.ts";
import { storageFailureIn, storeError } from "./store.ts";

export interface TurnFlags {
  readonly message: string;
  /** `--image` files, read and checked (image-files.ts): sent with this turn only. */
  readonly images?: readonly ImageInput[] | undefined;
  readonly agent?: string | undefined;
  readonly sessionKey?: string | undefined;
  readonly sessionId?: string | undefined;
  readonly to?: string | undefined;
  readonly model?: string | undefined;
  readonly thinking?: string | undefined;
  readonly thinkingOnce?: string | undefined;
  readonly timeout?: number | undefined;
  readonly json?: boolean | undefined;
  readonly verbose?: boolean | undefined;
  /** Stream partial text; default: when stdout is a terminal (never with `--json`). */
  readonly stream?: boolean | undefined;
}

function usageFrom(error: unknown): never {
  if (error instanceof CommandSessionError || error instanceof KernelInputError) {
    throw new CliError(EXIT.usage, error.message);
  }
  throw error;
}

/**
 * Writes partial text as it arrives; a new assistant message (after a tool call) starts on a new line, and a
 * diagnostic line on stderr first ends the current stdout line so the two do not interleave mid-line.
 */
function partialWriter(io: CliIo) {
  let shown = "";
  let midLine = false;
  const write = (text: string) => {
    if (text === "") return;
    io.stdout.write(text);
    midLine = !text.endsWith("\n");
  };
  return {
    onPartial(payload: { text: string; delta: string }): void {
      // Within a message each text is the one before plus its delta (a new message starts with text = delta):
      // told by length, a call costs the delta, not the text so far (partial text comes at every batch).
      if (shown !== "" && payload.text.length === shown.length + payload.delta.length) write(payload.delta);
      else if (payload.text.startsWith(shown)) write(payload.text.slice(shown.length));
      else {
        if (midLine) write("\n");
        write(payload.text);
      }
      shown = payload.text;
    },
    endLine(): void {
      if (midLine) write("\n");
    },
  };
}

function verboseEvent(io: CliIo, event: TurnOutcome["events"][number], before: () => void): void {
  const data = event.data;
  const shown = event.stream === "lifecycle" || (event.stream === "tool" && data.phase !== "update");
  if (shown) before();
  if (event.stream === "lifecycle") {
    const phase = String(data.phase);
    if (phase === "attempt_start") {
      line(
        io.stderr,
        paint(
          io,
          io.stderr,
          "dim",
          `[agent] attempt ${data.attempt}: ${data.provider}/${data.model} thinking=${data.thinkingLevel}`,
        ),
      );
    } else if (phase === "attempt_end") {
      const text = `[agent] attempt end: ${data.outcome}${data.reason ? ` (${data.reason})` : ""}`;
      line(io.stderr, paint(io, io.stderr, "dim", text));
    } else if (phase === "end") {
      const text = `[agent] run end: ${data.status}${data.reason ? ` (${data.reason})` : ""}`;
      line(io.stderr, paint(io, io.stderr, "dim", text));
    }
  } else if (event.stream === "tool" && data.phase !== "update") {
    const detail = data.phase === "start" ? JSON.stringify(data.args ?? {}) : data.isError ? "error" : "ok";
    line(io.stderr, paint(io, io.stderr, "dim", `[agent] tool ${data.phase} ${data.name} ${detail}`));
  }
}

/** The model did not get the `--image` files: said on stderr, whatever the reply says. */
function imagesOmitted(io: CliIo, data: Readonly<Record<string, unknown>>): void {
  const count = typeof data.count === "number" ? data.count : 0;
  const images = count === 1 ? "1 image was" : `${count} images were`;
  const why =
    data.reason === "model_without_vision"
      ? 'the model does not take image input (its input list lacks "image")'
      : "it could not be fitted to the model's image limits";
  line(io.stderr, paint(io, io.stderr, "yellow", `agent: ${images} not sent: ${why}.`));
}

export async function runTurn(
  context: CommandContext,
  flags: TurnFlags,
  io: CliIo,
  signal?: AbortSignal,
): Promise<ExitCode> {
  const thinkingOnce =
    flags.thinkingOnce === undefined
      ? undefined
      : (parseOrUsage(flags.thinkingOnce, "--thinking-once") ?? "off");
  if (flags.thinking !== undefined) parseOrUsage(flags.thinking, "--thinking");
  let store: AnyKernelStore;
  try {
    store = await openKernelStore({ stateDir: context.stateDir, config: context.config });
  } catch (error) {
    throw storeError(error, context);
  }
  const runId = randomUUID();
  // The text of the turn's last answer as it arrived: what is shown when the store fails after the model
  // answered and no outcome comes back to print it from.
  let answered = "";
  let shown = false;
  try {
    const deps = { config: context.config, store };
    const session = await resolveCommandSession(deps, {
      agentId: flags.agent,
      sessionKey: flags.sessionKey,
      sessionId: flags.sessionId,
      to: flags.to,
    }).catch(usageFrom);
    await refuseSessionIdReset(store, session);
    await persistCommandSettings(deps, session, {
      thinking: flags.thinking,
      verbose: flags.verbose ? "on" : undefined,
    }).catch(usageFrom);
    const kernel = createKernel(deps);
    const prepared = await kernel
      .prepareSession({
        ...session,
        runOptions: {
          entryPoint: "agent",
          ...(flags.model === undefined ? {} : { model: flags.model }),
          ...(thinkingOnce === undefined ? {} : { thinking: thinkingOnce }),
          ...(flags.timeout === undefined ? {} : { timeoutSeconds: flags.timeout }),
        },
      })
      .catch((error: unknown) => {
        if (error instanceof KernelInputError) usageFrom(error);
        if (storageFailureIn(error, context) !== undefined) throw error;
        // Resolution failures are what the flags or the config asked for (an unknown model, a bad level).
        throw new CliError(EXIT.usage, `cannot run this turn: ${(error as Error).message}`);
      });
    if (flags.verbose) {
      const runtime = prepared.runtimeContext;
      const session = `[agent] session ${runtime.sessionKey.value} (${prepared.transcript.sessionId}), model ${runtime.model.value.key}, thinking ${runtime.thinking.value}, workspace ${runtime.workspaceDir.value}`;
      line(io.stderr, paint(io, io.stderr, "dim", session));
      for (const note of runtime.notes) line(io.stderr, paint(io, io.stderr, "dim", `[agent] note: ${note}`));
    }
    const stream = !flags.json && (flags.stream ?? io.stdout.isTTY === true);
    shown = stream;
    const writer = partialWriter(io);
    const recovery = recoveryLines(io, () => writer.endLine());
    const outcome = await kernel.executeTurn(prepared, {
      prompt: flags.message,
      ...(flags.images !== undefined && flags.images.length > 0 ? { images: flags.images } : {}),
      runId,
      ...(signal === undefined ? {} : { signal }),
      callbacks: {
        ...(stream ? { onPartialReply: (payload) => writer.onPartial(payload) } : {}),
        onAgentEvent: (event) => {
          const data = event.data;
          if (event.stream === "assistant" && data.type === "message_end" && typeof data.text === "string")
            answered = data.stopReason === "error" || data.stopReason === "aborted" ? "" : data.text;
          recovery(event);
          if (event.stream === "lifecycle" && data.phase === "images_omitted") imagesOmitted(io, data);
          if (flags.verbose) verboseEvent(io, event, () => writer.endLine());
        },
      },
    });
    if (flags.json) {
      line(io.stdout, JSON.stringify(outcome, null, 2));
    } else if (stream) {
      writer.endLine();
    } else {
      // An error payload is the provider's raw message (often a JSON body): the one-line report on stderr
      // below says what went wrong, so stdout carries only the reply.
      const texts = outcome.result.payloads.flatMap((payload) =>
        payload.text && !payload.isError ? [payload.text] : [],
      );
      if (texts.length > 0) line(io.stdout, texts.join("\n\n"));
    }
    if (outcome.status === "ok") {
      if (flags.verbose)
        line(
          io.stderr,
          paint(
            io,
            io.stderr,
            "dim",
            `[agent] run ${outcome.runId} stored; see: agent runs show ${outcome.runId}`,
          ),
        );
      return EXIT.ok;
    }
    if (outcome.result.reason === STORAGE_REASON) {
      const replied = outcome.result.payloads.some((payload) => payload.text && !payload.isError);
      const message = outcome.result.errorMessage ?? "the store failed";
      line(
        io.stderr,
        `agent: run ${outcome.runId} failed: ${message}.${replied ? unstoredReply(message) : ""}`,
      );
      return EXIT.store;
    }
    const why = [outcome.result.reason, outcome.result.errorMessage].filter(Boolean).join(": ");
    const ended = `agent: run ${outcome.runId} ended ${outcome.status}${why ? ` (${why})` : ""}.`;
    line(io.stderr, paint(io, io.stderr, "red", ended));
    return outcome.status === "aborted" && signal?.aborted ? EXIT.interrupted : EXIT.failed;
  } catch (error) {
    const storage = storageFailureIn(error, context);
    if (storage === undefined) throw error;
    // The store failed past the point of an outcome: the run record could not be finished (the executor's
    // result comes with the error), or a later write (the session's metadata) failed after the model answered.
    const result = error instanceof TurnNotRecordedError ? error.result : undefined;
    const reply =
      result?.payloads
        .flatMap((payload) => (payload.text && !payload.isError ? [payload.text] : []))
        .join("\n\n") ?? answered;
    if (reply !== "" && !shown && !flags.json) line(io.stdout, reply);
    const above = !(shown || flags.json === true);
    if (result !== undefined) {
      // Its transcript failed first (the result says how), then its record: both are said.
      const transcriptFailed = result.reason === STORAGE_REASON && result.errorMessage !== undefined;
      const what = transcriptFailed
        ? `${result.errorMessage}; nor could the run be recorded: ${storage.message}`
        : `the run could not be recorded: ${storage.message}`;
      const note =
        reply === ""
          ? ""
          : transcriptFailed
            ? unstoredReply(result.errorMessage ?? "", !above)
            : result.status === "ok"
              ? ` The reply${above ? " above" : ""} was stored in the transcript.`
              : "";
      throw new CliError(EXIT.store, `run ${runId}: ${what}.${note}`);
    }
    const stored = await store.runs.get(runId).catch(() => undefined);
    const note =
      reply === ""
        ? ""
        : stored?.status === "succeeded"
          ? ` The reply${above ? " above" : ""} was stored (run ${runId} succeeded); what failed came after it.`
          : unstoredReply(storage.message, !above);
    throw new CliError(EXIT.store, `run ${runId}: ${storage.message}.${note}`);
  } finally {
    await store.close().catch((error: unknown) => {
      // Closing folds what is journaled: a store that cannot take it keeps the journal for the next open.
      if (storageFailureIn(error, context) === undefined) throw error;
    });
  }
}

/**
 * A `--session-id` the store does not know names a new session: refused when the key it would run under
 * already holds a conversation (a typo would otherwise replace that conversation's id, and the next turn
 * would start afresh). A new conversation is started explicitly, under a key of its own.
 */
async function refuseSessionIdReset(store: AnyKernelStore, session: SessionKernelInput): Promise<void> {
  // resolveCommandSession names all three when --session-id is given.
  const { agentId, sessionKey, sessionId } = session;
  if (sessionId === undefined || agentId === undefined || sessionKey === undefined) return;
  if ((await store.sessions.getBySessionId(agentId, sessionId)) !== undefined) return;
  const existing = await store.sessions.get({ agentId, sessionKey });
  if (existing === undefined || existing.sessionId === sessionId) return;
  throw new CliError(
    EXIT.usage,
    `no session "${sessionId}" for agent ${agentId}, and session ${sessionKey} already holds a conversation (session id ${existing.sessionId}): --session-id never replaces it. To continue that conversation, leave out --session-id (or pass ${existing.sessionId}); to start a new one, name a new key: --session-key <new-key> (add --session-id ${sessionId} to give it that id); see \`agent sessions list\`.`,
  );
}

/** What the user is told about a reply the store could not take. */
function unstoredReply(message: string, notShownAbove = false): string {
  const which = notShownAbove ? "The reply" : "The reply above";
  return /kept in the append journal/.test(message)
    ? ` ${which} is kept in the append journal named above until the database can take it.`
    : ` ${which} was not stored: the next turn will not see it.`;
}

function parseOrUsage(raw: string, flag: string): string | null {
  try {
    return parseThinkingFlag(raw, flag);
  } catch (error) {
    return usageFrom(error);
  }
}

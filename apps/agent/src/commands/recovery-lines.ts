// The one line on stderr `agent -m` prints for each recovery step the user should know about, with or without
// `--verbose`: a switch to a fallback model or another auth profile, a wait the provider asked for
// (`Retry-After`) before the same model is tried again, and a compaction of the session (done or failed).
// Owns the wording; the events are the executor's (lifecycle `attempt_start`, `error`, `attempt_end`,
// `retry_wait`; compaction `end`/`failed`). Does not own the `--verbose` lines (turn.ts).
import type { TurnOutcome } from "@agent-kernel/kernel";
import { type CliIo, line, paint } from "../io.ts";

type AgentEvent = TurnOutcome["events"][number];

/** A provider's error text as one short clause: its first line, cut at 300 characters. */
export function shortError(message: string): string {
  const first = message.trim().split("\n")[0] ?? "";
  return first.length > 300 ? `${first.slice(0, 299)}…` : first;
}

const WHY: Readonly<Record<string, string>> = {
  rate_limit: "is rate limited",
  overloaded: "is overloaded",
};

/**
 * A handler of the turn's events that prints the recovery lines; `before` ends a streamed stdout line first
 * so the two do not interleave mid-line.
 */
export function recoveryLines(io: CliIo, before: () => void): (event: AgentEvent) => void {
  let model = "the model";
  let error: string | undefined;
  const say = (text: string) => {
    before();
    line(io.stderr, paint(io, io.stderr, "yellow", `agent: ${text}`));
  };
  return (event) => {
    const data = event.data;
    if (event.stream === "error") {
      error = typeof data.message === "string" ? shortError(data.message) : undefined;
      return;
    }
    if (event.stream === "compaction") {
      const failed =
        data.phase === "failed" ||
        (data.phase === "end" && (data.aborted === true || typeof data.errorMessage === "string"));
      if (failed) {
        const why = typeof data.errorMessage === "string" ? `: ${shortError(data.errorMessage)}` : "";
        say(`compacting the session failed${why}.`);
      } else if (data.phase === "end") {
        const tokens = typeof data.tokensBefore === "number" ? ` (${data.tokensBefore} tokens before)` : "";
        say(`the context was too large for ${model}: the session was compacted${tokens}; trying again.`);
      }
      return;
    }
    if (event.stream !== "lifecycle") return;
    if (data.phase === "attempt_start") {
      model = `${String(data.provider)}/${String(data.model)}`;
      error = undefined;
    } else if (data.phase === "retry_wait" && typeof data.waitMs === "number") {
      const reason = String(data.reason);
      const seconds = Math.round(data.waitMs / 100) / 10;
      say(
        `${model} ${WHY[reason] ?? "refused the request"} (${reason}); retrying in ${seconds} s as the provider asked (Retry-After).`,
      );
    } else if (data.phase === "attempt_end" && typeof data.action === "string") {
      const [step, target] = [data.action.split(":")[0], data.action.slice(data.action.indexOf(":") + 1)];
      const why = `${String(data.reason)}${error ? `: ${error}` : ""}`;
      if (step === "fallback_model") say(`${model} failed (${why}); falling back to ${target}.`);
      else if (step === "rotate_profile") say(`${model} failed (${why}); trying auth profile "${target}".`);
    }
  };
}

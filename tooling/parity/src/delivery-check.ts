// Whether what an app delivered obeys its declared delivery policy, given the kernel-level outcome of the
// same cell (the stored runs' statuses and replies). These are the rules that hold for any scenario; the
// exact bytes are the golden's business (goldens.ts). Owns the meaning of each policy value.
import type { KernelOutcome } from "./kernel-outcome.ts";
import type { AppDeliveryPolicy, Delivered } from "./types.ts";

interface RunGist {
  readonly status: string;
  readonly finalText: string;
}

function gistOf(run: unknown): RunGist {
  const record = (run as { record?: { status?: unknown } }).record;
  const messages = (run as { assistantMessages?: { text?: unknown }[] }).assistantMessages ?? [];
  return {
    status: String(record?.status ?? ""),
    finalText: String(messages.at(-1)?.text ?? ""),
  };
}

const SILENT = /^\s*no_reply\s*$/i;
/** A provider's JSON error body or a stack trace: what a chat user must never be sent. */
const RAW_ERROR = /(\{"(error|message|type)"|\n\s+at \S+ \()/;

/** Every way `delivered` breaks `policy`; empty when it obeys it. */
export function checkDelivery(
  policy: AppDeliveryPolicy,
  outcome: KernelOutcome,
  delivered: readonly Delivered[],
  options: { readonly blockStreaming: boolean },
): string[] {
  const problems: string[] = [];
  const runs = outcome.runs.map(gistOf);
  const channel = delivered.filter((item) => item.kind === "channel");
  const texts = delivered.flatMap((item) =>
    item.kind === "channel" || item.kind === "stdout" ? [item.text ?? ""] : [],
  );
  if (texts.some((text) => SILENT.test(text))) problems.push("silent: a NO_REPLY reply was delivered");
  if (policy.errors === "user-message" && channel.some((item) => RAW_ERROR.test(item.text ?? "")))
    problems.push("errors=user-message: a raw provider error body or a stack trace was sent to the user");

  const blocks = channel.filter((item) => item.isBlock === true);
  if (policy.streaming !== "blocks" && blocks.length > 0)
    problems.push(`streaming=${policy.streaming}: blocks were sent`);
  if (policy.streaming === "blocks" && options.blockStreaming) {
    const answered = runs.some(
      (run) => run.status === "succeeded" && run.finalText.trim() !== "" && !SILENT.test(run.finalText),
    );
    if (answered && blocks.length === 0)
      problems.push("streaming=blocks: block streaming is on but no block was sent");
  }
  if (policy.final === "unstreamed") {
    const blockTexts = new Set(blocks.map((item) => (item.text ?? "").trim()));
    const repeated = channel.filter(
      (item) => item.isBlock !== true && blockTexts.has((item.text ?? "").trim()),
    );
    if (repeated.length > 0) problems.push("final=unstreamed: a final payload repeated a streamed block");
  }
  if (
    !policy.replyThreading &&
    delivered.some((item) => item.kind === "channel" && item.replyTo !== undefined)
  )
    problems.push("replyThreading=false: a reply was threaded");
  const typed = delivered.some((item) => item.kind === "typing");
  if (policy.typing && runs.length > 0 && !typed) problems.push("typing=true: no typing indicator was sent");
  if (!policy.typing && typed) problems.push("typing=false: a typing indicator was sent");

  const failed = runs.filter((run) => run.status === "failed" || run.status === "timed_out");
  if (policy.errors === "user-message") {
    const warnings = channel.filter((item) => (item.text ?? "").startsWith("⚠️"));
    if (warnings.length !== failed.length)
      problems.push(
        `errors=user-message: ${failed.length} failed run(s) but ${warnings.length} warning message(s)`,
      );
  }
  if (
    policy.errors === "stderr-and-exit-code" &&
    delivered.some((item) => item.kind === "stdout" && RAW_ERROR.test(item.text ?? ""))
  )
    problems.push("errors=stderr-and-exit-code: a raw provider error body was printed on stdout");
  if (policy.errors === "stderr-and-exit-code") {
    const exits = delivered.flatMap((item) => (item.kind === "exit" ? [item.code] : []));
    const nonZero = exits.filter((code) => code !== 0).length;
    const unsuccessful = runs.filter((run) => run.status !== "succeeded").length;
    if (nonZero !== unsuccessful)
      problems.push(
        `errors=stderr-and-exit-code: ${unsuccessful} unsuccessful run(s) but ${nonZero} non-zero exit(s)`,
      );
    const stderr = delivered.filter((item) => item.kind === "stderr");
    if (stderr.length !== unsuccessful)
      problems.push(
        `errors=stderr-and-exit-code: ${unsuccessful} unsuccessful run(s) but ${stderr.length} stderr report(s)`,
      );
    if (stderr.some((item) => item.kind === "stderr" && item.text.trim().split("\n").length !== 1))
      problems.push("errors=stderr-and-exit-code: an error report is longer than one line");
  }
  if (
    (policy.errors === "dropped" || policy.errors === "status-error") &&
    channel.some((item) => (item.text ?? "").startsWith("⚠️"))
  )
    problems.push(`errors=${policy.errors}: a failed run produced a user message`);
  return problems;
}

// @agent-kernel/followup: the queue runner. Messages that arrive while a session is busy are stored durably
// (the kernel store's queue) and handled by queue mode — steer, followup, collect, interrupt — under the cap
// and its drop policy; every turn runs through the kernel. The programmatic entry (`createFollowupRunner`),
// its clocks, the prompt builders and the `followup` command line.
export { type CliIo, EXIT, type ExitCode, runFollowupCli } from "./cli.ts";
export { type Clock, ManualClock, systemClock } from "./clock.ts";
export {
  FollowupInputError,
  type InboundMessage,
  ITEM_KIND,
  type MessagePayload,
  type QueueMode,
  type SummaryPayload,
  validateInbound,
} from "./inbound.ts";
export {
  type DropPolicy,
  droppedSummaryLine,
  keptSummaryLines,
  type OverflowPlan,
  planOverflow,
} from "./overflow.ts";
export {
  COLLECT_TITLE,
  type CollectItem,
  collectItemPrompt,
  collectPrompt,
  followupPrompt,
  overflowSummaryPrompt,
  queueSummaryLine,
} from "./prompts.ts";
export {
  type AcceptResult,
  createFollowupRunner,
  type DrainReport,
  type DropReason,
  type FollowupEvent,
  type FollowupEventType,
  FollowupRunner,
  type FollowupRunnerOptions,
  type FollowupSettings,
  type QueueItem,
  type ReplyPayload,
} from "./runner.ts";

// `agent-kernel pairing list|approve|deny`: the owner's side of DM pairing (`dmPolicy: "pairing"`). A
// stranger who writes to the bot gets a code; the owner approves it here, after which the sender is allowed.
// Over channels-core's PairingStore in the kernel store's channel state, so the running gateway sees an
// approval at its next message. `deny` drops a pending request (by its code) or revokes an approved sender
// (by id). Owns the command's flags, output and exit codes; not the pairing rules (channels-core).
import type { PairingApproval, PairingRequest } from "@agent-kernel/channels-core";
import { closestMatch } from "@agent-kernel/config";
import { COMMON_FLAGS_HELP, expectArgs, parseCommand, stringFlag, subcommand } from "../args.ts";
import { loadOperationContext, type OperationContext, withStore } from "../context.ts";
import { CliError, EXIT } from "../errors.ts";
import { type CliIo, line, paint, printJson } from "../io.ts";

const USAGE = `Usage:
  agent-kernel pairing list [<channel> | --channel <id>] [--account <id>] [--json]
  agent-kernel pairing approve <channel> <code> [--account <id>]
  agent-kernel pairing deny <channel> <code | senderId> [--account <id>]

A sender the bot does not know, on a channel with dmPolicy "pairing", is given a code; approving the code
allows that sender from then on (the running gateway sees it at once). deny drops a pending request, or
revokes a sender approved before.

Examples:
  agent-kernel pairing list
  agent-kernel pairing approve telegram K7QX2M9P
  agent-kernel pairing deny telegram 5550001

Exit codes: 0 ok; 2 usage or config (an unknown channel); 3 no pending request has that code, or no such
sender; 1 approvals are locked after too many wrong codes; 5 the store cannot be opened.

${COMMON_FLAGS_HELP}`;

/** `pairing …`; resolves to the exit code. */
export async function runPairing(argv: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommand(argv, { channel: { type: "string" }, account: { type: "string" } }, USAGE, io);
  if (parsed === undefined) return EXIT.ok;
  const { name, rest } = subcommand(parsed, "pairing", ["list", "approve", "deny"], USAGE);
  const context = loadOperationContext(parsed.values, io);
  const accountId = stringFlag(parsed, "account") ?? "default";
  const { PairingStore } = await import("@agent-kernel/channels-core");

  if (name === "list") {
    // `pairing list telegram` (OpenClaw's form) or `--channel telegram`.
    if (rest.length > 1)
      throw new CliError(EXIT.usage, `pairing list takes at most one <channel>, got "${rest.join(" ")}"`);
    const only = rest[0] ?? stringFlag(parsed, "channel");
    const channels = only === undefined ? configuredChannels(context) : [checkedChannel(context, only)];
    return withStore(context, async (store) => {
      const pairing = new PairingStore(store.channelState);
      const rows: {
        channel: string;
        accountId: string;
        pending: PairingRequest[];
        approved: PairingApproval[];
      }[] = [];
      for (const channel of channels) {
        rows.push({
          channel,
          accountId,
          pending: await pairing.listPending(channel, accountId),
          approved: await pairing.listApproved(channel, accountId),
        });
      }
      if (parsed.values.json === true) {
        printJson(io, { channels: rows });
        return EXIT.ok;
      }
      if (rows.length === 0) line(io.stdout, "No channels are configured (channels.* in the config).");
      for (const row of rows) {
        line(io.stdout, paint(io, io.stdout, "bold", `${row.channel} (account ${row.accountId})`));
        if (row.pending.length === 0) line(io.stdout, "  pending: none");
        for (const request of row.pending) {
          line(
            io.stdout,
            `  pending  ${request.code}  from ${senderLabel(request)}  expires ${new Date(request.expiresAt).toISOString()}`,
          );
        }
        for (const approval of row.approved) {
          line(
            io.stdout,
            `  approved ${senderLabel(approval)}  since ${new Date(approval.approvedAt).toISOString()}`,
          );
        }
      }
      return EXIT.ok;
    });
  }

  const [channelArg, codeOrSender] = expectArgs(rest, ["channel", "code"], `pairing ${name}`) as [
    string,
    string,
  ];
  const channel = checkedChannel(context, channelArg);
  return withStore(context, async (store) => {
    const pairing = new PairingStore(store.channelState);
    if (name === "approve") {
      const result = await pairing.approvePairing(channel, accountId, codeOrSender);
      if (result.status === "approved") {
        line(
          io.stdout,
          `Approved ${senderLabel(result.approval)} on ${channel}: they can talk to the bot now.`,
        );
        return EXIT.ok;
      }
      if (result.status === "locked") {
        throw new CliError(
          EXIT.failed,
          `approvals on ${channel} are locked for ${Math.ceil(result.retryAfterMs / 60_000)} more minute(s) after too many wrong codes`,
        );
      }
      throw new CliError(
        EXIT.notFound,
        `no pending request on ${channel} (account ${accountId}) has code "${codeOrSender}" (${result.attemptsLeft} wrong code(s) left before approvals lock). See: agent-kernel pairing list`,
      );
    }
    // deny: a pending code first, else an approved sender id.
    const denied = await pairing.denyPairing(channel, accountId, codeOrSender);
    if (denied !== undefined) {
      line(
        io.stdout,
        `Denied the pending request of ${senderLabel(denied)} on ${channel} (code ${denied.code}).`,
      );
      return EXIT.ok;
    }
    if (await pairing.revoke(channel, accountId, codeOrSender)) {
      line(
        io.stdout,
        `Revoked sender ${codeOrSender} on ${channel}: they need a new pairing to talk to the bot.`,
      );
      return EXIT.ok;
    }
    throw new CliError(
      EXIT.notFound,
      `nothing to deny on ${channel} (account ${accountId}): "${codeOrSender}" is neither a pending code nor an approved sender. See: agent-kernel pairing list`,
    );
  });
}

function senderLabel(sender: { senderId: string; username?: string; displayName?: string }): string {
  const names = [
    sender.displayName,
    sender.username === undefined ? undefined : `@${sender.username}`,
  ].filter(Boolean);
  return names.length === 0 ? sender.senderId : `${sender.senderId} (${names.join(", ")})`;
}

function configuredChannels(context: OperationContext): string[] {
  return Object.keys(context.config.channels).sort();
}

function checkedChannel(context: OperationContext, channel: string): string {
  const known = configuredChannels(context);
  if (known.includes(channel)) return channel;
  const guess = closestMatch(channel, known);
  throw new CliError(
    EXIT.usage,
    `no channel "${channel}" in the config${guess ? `; did you mean "${guess}"?` : ""} (configured: ${known.join(", ") || "none"})`,
  );
}

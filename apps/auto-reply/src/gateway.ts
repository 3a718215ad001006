// The auto-reply gateway: the channels' inbound messages through access control and routing into kernel
// turns, and the turns' replies back to the conversation. Owns the IO of the daemon: starting and stopping the
// channels, accepting a message durably before telling the channel it was taken (inbox.ts), one turn per
// message in arrival order per session, the turn's lifecycle (typing, block replies, finals, the `message`
// tool and the user-facing error are sent by turn-delivery.ts; pairing by pairing-access.ts), and a graceful
// shutdown (running turns finish within a grace period or are aborted and recorded as interrupted; accepted
// messages not yet run stay in the inbox for the next start). Does not own any turn logic (the kernel: tags, directives, silent tokens and the messaging-tool
// duplicate filter are already applied to what it hands over), access control or routing rules (hooks:
// routing.ts, channels-core), or transport (the adapters).
import {
  type ChannelAdapter,
  InboundDeduper,
  type InboundMessage,
  type OutboundMessage,
  PairingStore,
  withInboundImages,
} from "@agent-kernel/channels-core";
import type { KernelConfig } from "@agent-kernel/config";
import {
  type AnyKernelStore,
  createKernel,
  type Kernel,
  openKernelStore,
  type TurnOutcome,
} from "@agent-kernel/kernel";
import {
  AUTO_REPLY_DELIVERY_POLICY,
  type DeliveryLimitRecord,
  deliveryLimitLine,
  maxMessagesPerReplyFor,
  ReplyMessageBudget,
  recordDeliveryLimit,
  targetFor,
} from "./delivery.ts";
import type { AutoReplyGateway, AutoReplyGatewayOptions } from "./gateway-types.ts";
import { Inbox, type InboxEntry } from "./inbox.ts";
import { challengeSender, decideAccess } from "./pairing-access.ts";
import { type AccessVerdict, defaultAccess, defaultRoute, type Route } from "./routing.ts";
import { errorText, replySink, sendLogged, startTyping } from "./turn-delivery.ts";

export type {
  AutoReplyGateway,
  AutoReplyGatewayOptions,
  BusyMessage,
  HandledTurn,
} from "./gateway-types.ts";

export const ENTRY_POINT = "auto-reply";

const DEFAULT_SHUTDOWN_GRACE_MS = 30_000;

/** The message text; a media-only message is its media as OpenClaw's placeholders (`<media:image>`). */
export function promptOf(message: InboundMessage): string {
  if (message.text.trim() !== "") return message.text;
  const media = message.media.map((item) => `<media:${item.kind}>`).join(" ");
  return media === "" ? "(empty message)" : media;
}

export function createAutoReplyGateway(options: AutoReplyGatewayOptions): AutoReplyGateway {
  // The state dir is written into the config, as the `agent` command does, so the store and the runtime's
  // defaults (agent dir, workspace) agree on where state lives.
  const config: KernelConfig = {
    ...options.config,
    store: { ...options.config.store, stateDir: options.stateDir },
  };
  const access = options.access ?? defaultAccess;
  const route = options.route ?? defaultRoute;
  const log = options.log ?? ((line: string) => process.stderr.write(`[auto-reply] ${line}\n`));
  const channels = new Map(
    options.channels.map((channel) => [`${channel.id}\u0000${channel.accountId}`, channel]),
  );
  const inbox = new Inbox(options.stateDir);
  let kernel: Kernel | undefined = options.kernel;
  let ownedStore: AnyKernelStore | undefined;
  let pairing: PairingStore | undefined =
    options.store === undefined ? undefined : new PairingStore(options.store.channelState);
  const deduper = new InboundDeduper();
  let state: "new" | "running" | "stopping" | "stopped" = "new";
  const receiving = new AbortController();
  /** Per session key: the tail of its chain of turns (arrival order). */
  const sessionChains = new Map<string, Promise<void>>();
  /** Turns being prepared or run, with the controller that interrupts them at shutdown. */
  const running = new Map<string, { controller: AbortController; done: Promise<void> }>();
  /** Sessions whose next turn starts a new sessionId (after a context overflow the run could not recover). */
  const pendingResets = new Set<string>();
  let outstanding = 0;
  let idleWaiters: (() => void)[] = [];

  const channelOf = (message: InboundMessage) => channels.get(`${message.channel}\u0000${message.accountId}`);
  const settleOne = () => {
    outstanding -= 1;
    if (outstanding === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const wake of waiters) wake();
    }
  };

  const send = (channel: ChannelAdapter, message: OutboundMessage, sent: OutboundMessage[]) =>
    sendLogged(channel, message, sent, log);

  async function runTurn(entry: InboxEntry, routed: Route, senderIsOwner: boolean): Promise<void> {
    const inbound = entry.message;
    const channel = channelOf(inbound);
    if (channel === undefined || kernel === undefined) {
      log(
        `no started channel ${inbound.channel} (${inbound.accountId}) for message ${inbound.messageId}; kept in the inbox`,
      );
      return;
    }
    const controller = new AbortController();
    let finish = () => {};
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    running.set(entry.id, { controller, done });
    const sent: OutboundMessage[] = [];
    const messageToolSends: OutboundMessage[] = [];
    const stopTyping = startTyping(
      channel,
      inbound,
      options.typingIntervalMs ?? config.agents.defaults.typingIntervalSeconds * 1000,
      log,
    );
    const blocksToChannel = config.channels[inbound.channel]?.blockStreaming !== "off";
    // one reply is at most maxMessagesPerReply messages, however many sends it takes
    const budget = new ReplyMessageBudget(maxMessagesPerReplyFor(config, inbound.channel));
    let outcome: TurnOutcome | undefined;
    let error: string | undefined;
    let deliveryLimit: DeliveryLimitRecord | undefined;
    try {
      const forceNew = pendingResets.delete(routed.sessionKey);
      const prepared = await kernel.prepareSession({
        agentId: routed.agentId,
        sessionKey: routed.sessionKey,
        messageContext: {
          channel: inbound.channel,
          accountId: inbound.accountId,
          chatType: routed.chatType,
          senderId: inbound.sender.id,
          senderIsOwner,
          ...(routed.chatType === "direct" ? {} : { groupId: inbound.conversation.chatId }),
          ...(inbound.conversation.threadId === undefined ? {} : { threadId: inbound.conversation.threadId }),
          to: inbound.conversation.chatId,
          // No `currentMessageId`: the kernel's preparation cache keys on the whole message context, so a
          // per-message id would make every turn resolve from scratch. `[[reply_to_current]]` then comes back
          // as `replyToCurrent` without an id, and `outboundFor` threads it to this inbound message.
        },
        runOptions: { entryPoint: ENTRY_POINT, ...(forceNew ? { forceNewSession: true } : {}) },
      });
      const delivery = replySink({ channel, inbound, blocksToChannel, budget, sent, messageToolSends, log });
      outcome = await kernel.executeTurn(prepared, {
        prompt: promptOf(inbound),
        // the pictures the adapter downloaded: sent with this turn only (the kernel's TurnInput.images)
        ...(inbound.images !== undefined && inbound.images.length > 0 ? { images: inbound.images } : {}),
        signal: controller.signal,
        delivery,
        ...(options.ownerIds === undefined ? {} : { ownerNumbers: options.ownerIds }),
      });
      deliveryLimit = budget.report();
      if (deliveryLimit !== undefined) {
        log(deliveryLimitLine(outcome.runId, inbound.channel, deliveryLimit));
        // the reply is out: failing to record the hit must not tell the user the turn failed
        await recordDeliveryLimit(
          ownedStore ?? options.store,
          outcome.runId,
          inbound.channel,
          deliveryLimit,
        ).catch((thrown: unknown) =>
          log(`run ${outcome?.runId}: recording the delivery limit failed: ${errorText(thrown)}`),
        );
      }
      if (outcome.status !== "ok") {
        error = `run ${outcome.runId} ended ${outcome.status}${outcome.result.reason ? ` (${outcome.result.reason})` : ""}: ${outcome.result.errorMessage ?? ""}`;
        log(error);
        if (outcome.result.reason === "context_overflow") pendingResets.add(routed.sessionKey);
      }
    } catch (thrown) {
      // Preparation refused the turn (bad config for this agent, an unknown model) or the store failed.
      error = errorText(thrown);
      log(`message ${inbound.messageId} on ${inbound.channel}: ${error}`);
      const detail = (error.split("\n")[0] ?? "").slice(0, 200);
      await send(
        channel,
        { target: targetFor(inbound), text: `⚠️ Agent failed before reply: ${detail}` },
        sent,
      );
    } finally {
      stopTyping();
      running.delete(entry.id);
      finish();
    }
    inbox.done(entry.id);
    const interrupted = controller.signal.aborted && state !== "running";
    options.onTurnEnd?.({
      inbound,
      route: routed,
      ...(outcome === undefined ? {} : { outcome }),
      sent,
      messageToolSends,
      ...(error === undefined ? {} : { error }),
      interrupted,
      ...(deliveryLimit === undefined ? {} : { deliveryLimit }),
    });
  }

  /** Queues the accepted message behind its session's earlier messages. */
  function schedule(entry: InboxEntry): void {
    const inbound = entry.message;
    let routed: Route;
    try {
      routed = route(inbound, config);
    } catch (error) {
      log(`message ${inbound.messageId}: cannot route: ${errorText(error)}; kept in the inbox`);
      return;
    }
    const owner = entry.senderIsOwner || (options.ownerIds ?? []).includes(inbound.sender.id);
    const whenBusy = options.whenBusy;
    if (
      whenBusy !== undefined &&
      kernel !== undefined &&
      (sessionChains.has(routed.sessionKey) ||
        kernel.activeRuns({ sessionKey: routed.sessionKey }).length > 0)
    ) {
      outstanding += 1;
      void whenBusy({ inbound, route: routed, senderIsOwner: owner })
        .then(() => inbox.done(entry.id))
        .catch((error: unknown) =>
          log(
            `message ${inbound.messageId}: the busy-session queue refused it: ${errorText(error)}; kept in the inbox`,
          ),
        )
        .finally(settleOne);
      return;
    }
    outstanding += 1;
    const previous = sessionChains.get(routed.sessionKey) ?? Promise.resolve();
    const next = previous
      .then(() => (state === "running" ? runTurn(entry, routed, owner) : undefined))
      .catch((error: unknown) => log(`turn for ${inbound.messageId} failed: ${errorText(error)}`))
      .finally(settleOne);
    sessionChains.set(routed.sessionKey, next);
    void next.then(() => {
      if (sessionChains.get(routed.sessionKey) === next) sessionChains.delete(routed.sessionKey);
    });
  }

  async function onMessage(message: InboundMessage): Promise<void> {
    if (state !== "running")
      throw new Error("the auto-reply gateway is not running; the message was not accepted");
    // A redelivery (a restarted poller, a retried webhook) of a message already accepted.
    if (deduper.isDuplicate(message)) return;
    let verdict: AccessVerdict;
    try {
      verdict = await decideAccess(access, config, pairing, message);
    } catch (error) {
      deduper.forget(message);
      throw error;
    }
    if (!verdict.allowed) {
      log(
        `message ${message.messageId} from ${message.sender.id} on ${message.channel} refused: ${verdict.explanation}`,
      );
      if (verdict.pairing === true) await challengeSender(pairing, channelOf(message), message, log);
      return;
    }
    // Accepted = stored durably; only then does the channel hear that the message was taken. Pictures an
    // adapter deferred are fetched now, for a message let in only, and stored with it.
    let entry: InboxEntry;
    try {
      entry = inbox.accept(await withInboundImages(message), verdict.senderIsOwner);
    } catch (error) {
      deduper.forget(message);
      throw error;
    }
    schedule(entry);
  }

  const gateway: AutoReplyGateway = {
    policy: AUTO_REPLY_DELIVERY_POLICY,
    get kernel(): Kernel {
      if (kernel === undefined) throw new Error("the auto-reply gateway has not been started");
      return kernel;
    },
    async start() {
      if (state !== "new") throw new Error(`the auto-reply gateway cannot start: it is ${state}`);
      if (kernel === undefined) {
        ownedStore = await openKernelStore({ stateDir: options.stateDir, config });
        kernel = createKernel({ ...(options.kernelOptions ?? {}), config, store: ownedStore });
        pairing = new PairingStore(ownedStore.channelState);
      }
      state = "running";
      for (const entry of inbox.pending((file, problem) =>
        log(`inbox entry ${file} set aside: ${problem}`),
      )) {
        schedule(entry);
      }
      const started: ChannelAdapter[] = [];
      try {
        for (const channel of options.channels) {
          await channel.start({ onMessage, signal: receiving.signal });
          started.push(channel);
        }
      } catch (error) {
        state = "stopping";
        await Promise.allSettled(started.map((channel) => channel.stop()));
        await gateway.idle();
        await ownedStore?.close();
        state = "stopped";
        throw error;
      }
    },
    async stop() {
      if (state === "stopped" || state === "stopping") return;
      const wasRunning = state === "running";
      state = "stopping";
      receiving.abort();
      if (wasRunning) {
        const stopped = await Promise.allSettled(options.channels.map((channel) => channel.stop()));
        for (const result of stopped)
          if (result.status === "rejected") log(`a channel failed to stop: ${errorText(result.reason)}`);
      }
      const inFlight = [...running.values()];
      if (inFlight.length > 0) {
        let timer: NodeJS.Timeout | undefined;
        const grace = new Promise<"grace">((resolve) => {
          timer = setTimeout(() => resolve("grace"), options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS);
        });
        const finished = await Promise.race([Promise.all(inFlight.map((turn) => turn.done)), grace]);
        clearTimeout(timer);
        if (finished === "grace") {
          log(`interrupting ${running.size} running turn(s) after the shutdown grace period`);
          for (const turn of running.values()) turn.controller.abort();
        }
      }
      await gateway.idle();
      await ownedStore?.close();
      state = "stopped";
    },
    idle() {
      if (outstanding === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    abortSession(sessionKey) {
      return kernel?.abortSession({ sessionKey }) ?? [];
    },
  };
  return gateway;
}

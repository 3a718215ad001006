// Slack Socket Mode transport: `apps.connections.open` with the app-level token (`xapp-…`) gives a WebSocket URL;
// Slack says `hello`, then sends `events_api` envelopes that the client acknowledges by sending back their
// `envelope_id`, and `disconnect` when it wants the client to reconnect. Owns the connection, acks and
// reconnecting (at once on `disconnect`, with capped backoff after a failure). Does not own what an event means
// (the adapter's `onEvent`): an envelope is acknowledged only once `onEvent` accepted it, so Slack redelivers
// what the gateway could not take.
import { abortableSleep, ChannelError } from "@agent-kernel/channels-core";
import { SLACK_CHANNEL_ID, type SlackWebApi } from "./web-api.ts";

export interface SocketModeOptions {
  /** A Web API client holding the app-level token. */
  readonly appApi: SlackWebApi;
  /** Handles an `event_callback` payload; true once accepted (or deliberately ignored). */
  readonly onEvent: (payload: Record<string, unknown>) => Promise<boolean>;
  /** First reconnect delay after a failure (default 1 s), doubling up to `maxReconnectDelayMs` (30 s). */
  readonly reconnectDelayMs?: number;
  readonly maxReconnectDelayMs?: number;
}

export class SocketModeClient {
  readonly #options: SocketModeOptions;
  readonly #stop = new AbortController();
  readonly #inFlight = new Set<Promise<unknown>>();
  #socket: WebSocket | undefined;
  #loop: Promise<void> | undefined;

  constructor(options: SocketModeOptions) {
    this.#options = options;
  }

  /** Connects; resolves after Slack's `hello`, rejects when the first connection fails. */
  async start(): Promise<void> {
    let connected: () => void = () => {};
    let failed: (error: unknown) => void = () => {};
    const first = new Promise<void>((resolve, reject) => {
      connected = resolve;
      failed = reject;
    });
    this.#loop = this.#run(connected, failed);
    await first;
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    this.#socket?.close();
    await this.#loop?.catch(() => {});
    await Promise.allSettled([...this.#inFlight]);
  }

  async #run(connected: () => void, failed: (error: unknown) => void): Promise<void> {
    const base = this.#options.reconnectDelayMs ?? 1000;
    const max = this.#options.maxReconnectDelayMs ?? 30_000;
    let delay = base;
    let firstAttempt = true;
    while (!this.#stop.signal.aborted) {
      let outcome: "refresh" | "dropped";
      try {
        outcome = await this.#connectOnce(() => {
          delay = base;
          if (firstAttempt) connected();
          firstAttempt = false;
        });
      } catch (error) {
        if (firstAttempt) {
          failed(error);
          return;
        }
        // a permanent refusal (bad app token) stops the loop instead of retrying forever
        if (error instanceof ChannelError && !error.retryable) return;
        outcome = "dropped";
      }
      if (this.#stop.signal.aborted) return;
      if (outcome === "dropped") {
        try {
          await abortableSleep(delay, this.#stop.signal);
        } catch {
          return;
        }
        delay = Math.min(max, delay * 2);
      }
    }
  }

  /** One connection's life; resolves when it ends: `refresh` after Slack's disconnect, else `dropped`. */
  async #connectOnce(onHello: () => void): Promise<"refresh" | "dropped"> {
    const opened = await this.#options.appApi.call("apps.connections.open");
    const url = opened.url;
    if (typeof url !== "string")
      throw new ChannelError(SLACK_CHANNEL_ID, "apps.connections.open returned no url", { retryable: true });
    if (this.#stop.signal.aborted) return "dropped";
    const socket = new WebSocket(url);
    this.#socket = socket;
    return await new Promise<"refresh" | "dropped">((resolve, reject) => {
      let hello = false;
      let refresh = false;
      socket.addEventListener("message", (message) => {
        const envelope = parseEnvelope(message.data);
        if (!envelope) return;
        if (envelope.type === "hello") {
          hello = true;
          onHello();
        } else if (envelope.type === "disconnect") {
          refresh = true;
          socket.close();
        } else if (typeof envelope.envelope_id === "string") {
          this.#handleEnvelope(socket, envelope, envelope.envelope_id);
        }
      });
      socket.addEventListener("close", () => {
        if (this.#socket === socket) this.#socket = undefined;
        if (!hello && !this.#stop.signal.aborted)
          reject(
            new ChannelError(SLACK_CHANNEL_ID, "Socket Mode connection closed before hello", {
              retryable: true,
            }),
          );
        else resolve(refresh ? "refresh" : "dropped");
      });
      socket.addEventListener("error", () => {
        // a close event follows; it decides
      });
    });
  }

  #handleEnvelope(socket: WebSocket, envelope: Record<string, unknown>, envelopeId: string): void {
    const payload = envelope.payload;
    const work = (async () => {
      const accepted =
        envelope.type === "events_api" && typeof payload === "object" && payload !== null
          ? await this.#options.onEvent(payload as Record<string, unknown>)
          : true; // slash commands, interactivity: not handled by this adapter, acknowledged so Slack stops
      if (accepted && socket.readyState === WebSocket.OPEN)
        socket.send(JSON.stringify({ envelope_id: envelopeId }));
    })();
    this.#inFlight.add(work);
    void work.finally(() => this.#inFlight.delete(work));
  }
}

function parseEnvelope(data: unknown): Record<string, unknown> | undefined {
  if (typeof data !== "string") return undefined;
  try {
    const parsed: unknown = JSON.parse(data);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

// Socket Mode as Slack runs it: apps.connections.open (app token `xapp-…` only) hands out a `ws://` URL, the
// connection opens with `hello`, `events_api` envelopes go out and the client's acks come back by
// `envelope_id`, and `disconnect` asks the client to reconnect. Owns the connections, envelopes and acks; the
// WebSocket framing is websocket.ts's, the HTTP Events API sender events-sender.ts's.
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { SlackIdentity } from "./identity.ts";
import type { SlackParams } from "./request-params.ts";
import { acceptWebSocket, type ServerWebSocket } from "./websocket.ts";

export interface SocketDeliverOptions {
  readonly eventId?: string;
  readonly retryAttempt?: number;
  /** How long to wait for the client's ack (default 10 s). */
  readonly ackTimeoutMs?: number;
}

export interface SocketAck {
  readonly envelopeId: string;
  readonly eventId: string;
}

const SOCKET_PATH = "/socket/";

export class SocketMode {
  readonly #identity: SlackIdentity;
  readonly #origin: () => string;
  readonly #nextEventNumber: () => number;
  readonly #sockets: ServerWebSocket[] = [];
  readonly #pendingAcks = new Map<string, (ack: SocketAck) => void>();
  readonly #envelopeEvents = new Map<string, string>();
  readonly #socketWaiters: (() => void)[] = [];
  #connections = 0;
  #envelopeCounter = 0;

  /**
   * `origin` is read per call (the server knows its port only once it listens); `nextEventNumber` is shared
   * with the HTTP sender, so event ids count across both.
   */
  constructor(identity: SlackIdentity, origin: () => string, nextEventNumber: () => number) {
    this.#identity = identity;
    this.#origin = origin;
    this.#nextEventNumber = nextEventNumber;
  }

  /** Socket Mode connections opened so far (reconnects count). */
  get connections(): number {
    return this.#connections;
  }

  /** Socket Mode connections open now. */
  get openCount(): number {
    return this.#sockets.filter((socket) => !socket.closed).length;
  }

  /** The apps.connections.open method: only the app token may open a connection. */
  openConnection(token: string | undefined): SlackParams {
    if (!token) return { ok: false, error: "not_authed" };
    if (token === this.#identity.botToken) return { ok: false, error: "not_allowed_token_type" };
    if (token !== this.#identity.appToken) return { ok: false, error: "invalid_auth" };
    return {
      ok: true,
      url: `${this.#origin().replace(/^http/, "ws")}${SOCKET_PATH}${randomBytes(6).toString("hex")}`,
    };
  }

  /** An HTTP upgrade: a connection URL becomes a WebSocket that is greeted with `hello`; anything else 404s. */
  accept(req: IncomingMessage, socket: Duplex): void {
    if (!(req.url ?? "").startsWith(SOCKET_PATH)) {
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
      return;
    }
    const connection = acceptWebSocket(req, socket, {
      onText: (text) => this.#receive(text),
      onClose: () => {
        const index = connection ? this.#sockets.indexOf(connection) : -1;
        if (index !== -1) this.#sockets.splice(index, 1);
      },
    });
    if (!connection) return;
    this.#sockets.push(connection);
    this.#connections++;
    connection.send(
      JSON.stringify({
        type: "hello",
        num_connections: this.#sockets.length,
        connection_info: { app_id: this.#identity.appId },
      }),
    );
    for (const wake of this.#socketWaiters.splice(0)) wake();
  }

  /** Sends an `events_api` envelope over the newest connection; resolves with the client's ack. */
  deliver(event: SlackParams, deliver: SocketDeliverOptions = {}): Promise<SocketAck> {
    const socket = this.#sockets.filter((candidate) => !candidate.closed).at(-1);
    if (!socket) return Promise.reject(new Error("fake-slack: no Socket Mode connection is open"));
    const eventNumber = this.#nextEventNumber();
    this.#envelopeCounter++;
    const eventId = deliver.eventId ?? `Ev${String(eventNumber).padStart(8, "0")}`;
    const envelopeId = `env-${this.#envelopeCounter}-${randomBytes(3).toString("hex")}`;
    this.#envelopeEvents.set(envelopeId, eventId);
    const acked = new Promise<SocketAck>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pendingAcks.delete(envelopeId);
        reject(new Error(`fake-slack: envelope ${envelopeId} was not acknowledged`));
      }, deliver.ackTimeoutMs ?? 10_000);
      this.#pendingAcks.set(envelopeId, (ack) => {
        clearTimeout(timer);
        resolve(ack);
      });
    });
    socket.send(
      JSON.stringify({
        envelope_id: envelopeId,
        type: "events_api",
        accepts_response_payload: false,
        retry_attempt: deliver.retryAttempt ?? 0,
        retry_reason: deliver.retryAttempt ? "timeout" : "",
        payload: {
          token: "verification-token-unused",
          team_id: this.#identity.teamId,
          api_app_id: this.#identity.appId,
          event,
          type: "event_callback",
          event_id: eventId,
          event_time: Math.floor(Date.now() / 1000),
        },
      }),
    );
    return acked;
  }

  /** Waits until a connection is open (default 10 s). */
  waitForSocket(timeoutMs = 10_000): Promise<void> {
    return this.#sockets.some((socket) => !socket.closed)
      ? Promise.resolve()
      : new Promise<void>((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new Error("fake-slack: no Socket Mode connection")),
            timeoutMs,
          );
          this.#socketWaiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
  }

  /** Sends `disconnect` (Slack's refresh) on every open connection and closes them. */
  disconnectAll(reason = "refresh_requested"): void {
    for (const socket of [...this.#sockets]) {
      socket.send(JSON.stringify({ type: "disconnect", reason }));
      socket.close();
    }
  }

  /** Drops every connection without a close handshake (the fake shutting down). */
  terminateAll(): void {
    for (const socket of [...this.#sockets]) socket.terminate();
  }

  /** A client frame: an ack (`{envelope_id}`) settles its envelope; anything else is ignored. */
  #receive(text: string): void {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    const envelopeId =
      typeof message === "object" && message !== null ? (message as SlackParams).envelope_id : undefined;
    if (typeof envelopeId !== "string") return;
    const resolve = this.#pendingAcks.get(envelopeId);
    this.#pendingAcks.delete(envelopeId);
    resolve?.({ envelopeId, eventId: this.#envelopeEvents.get(envelopeId) ?? "" });
  }
}

// A minimal RFC 6455 WebSocket server side over node:http's `upgrade`, enough for the fake's Socket Mode: the
// opening handshake, text frames both ways (client frames masked, fragmented ones reassembled), ping/pong and
// the close handshake. Owns the framing only; what travels over it is socket-mode.ts's.
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";

const HANDSHAKE_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

export interface ServerWebSocket {
  send(text: string): void;
  close(code?: number): void;
  /** Drops the connection without a close handshake (a network failure). */
  terminate(): void;
  readonly closed: boolean;
}

export interface WebSocketHandlers {
  onText(text: string): void;
  onClose(): void;
}

/** Completes the handshake on `socket` and returns the connection, or undefined after refusing it. */
export function acceptWebSocket(
  req: IncomingMessage,
  socket: Duplex,
  handlers: WebSocketHandlers,
): ServerWebSocket | undefined {
  const key = req.headers["sec-websocket-key"];
  if (typeof key !== "string" || req.headers.upgrade?.toLowerCase() !== "websocket") {
    socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    return undefined;
  }
  const accept = createHash("sha1").update(`${key}${HANDSHAKE_GUID}`).digest("base64");
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
  );
  let closed = false;
  let buffer = Buffer.alloc(0);
  let fragments: Buffer[] = [];

  const writeFrame = (opcode: number, payload: Buffer): void => {
    if (socket.destroyed) return;
    const length = payload.length;
    let header: Buffer;
    if (length < 126) {
      header = Buffer.from([0x80 | opcode, length]);
    } else if (length < 65_536) {
      header = Buffer.alloc(4);
      header[0] = 0x80 | opcode;
      header[1] = 126;
      header.writeUInt16BE(length, 2);
    } else {
      header = Buffer.alloc(10);
      header[0] = 0x80 | opcode;
      header[1] = 127;
      header.writeBigUInt64BE(BigInt(length), 2);
    }
    socket.write(Buffer.concat([header, payload]));
  };

  const finish = (): void => {
    if (closed) return;
    closed = true;
    handlers.onClose();
  };

  socket.on("data", (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      if (buffer.length < 2) return;
      const first = buffer[0] ?? 0;
      const second = buffer[1] ?? 0;
      const fin = (first & 0x80) !== 0;
      const opcode = first & 0x0f;
      const masked = (second & 0x80) !== 0;
      let length = second & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (buffer.length < 4) return;
        length = buffer.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (buffer.length < 10) return;
        length = Number(buffer.readBigUInt64BE(2));
        offset = 10;
      }
      const maskOffset = offset;
      if (masked) offset += 4;
      if (buffer.length < offset + length) return;
      const payload = Buffer.from(buffer.subarray(offset, offset + length));
      if (masked)
        for (let i = 0; i < payload.length; i++)
          payload[i] = (payload[i] ?? 0) ^ (buffer[maskOffset + (i % 4)] ?? 0);
      buffer = buffer.subarray(offset + length);
      if (opcode === 0x8) {
        writeFrame(0x8, payload.subarray(0, 2));
        socket.end();
        finish();
        return;
      }
      if (opcode === 0x9) {
        writeFrame(0xa, payload);
        continue;
      }
      if (opcode === 0x1 || opcode === 0x0) {
        fragments.push(payload);
        if (fin) {
          const text = Buffer.concat(fragments).toString("utf8");
          fragments = [];
          handlers.onText(text);
        }
      }
    }
  });
  socket.on("close", finish);
  socket.on("error", finish);

  return {
    send: (text) => writeFrame(0x1, Buffer.from(text, "utf8")),
    close: (code = 1000) => {
      const payload = Buffer.alloc(2);
      payload.writeUInt16BE(code, 0);
      writeFrame(0x8, payload);
      socket.end();
    },
    terminate: () => {
      socket.destroy();
      finish();
    },
    get closed() {
      return closed;
    },
  };
}

// readBoundedBody over a real HTTP server on loopback, driven by a raw socket so the test controls exactly what
// the client sends and sees whether the server goes on reading.

import { createServer, type Server } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { closeAfterBodyfulRequest, readBoundedBody } from "./request-body.ts";

const LIMIT = 4096;

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server whose one endpoint answers 200 with the body's length, or 413; it counts what its sockets read. */
async function startServer(): Promise<{ port: number; bytesRead: () => number }> {
  const sockets: Socket[] = [];
  server = createServer(async (req, res) => {
    const body = await readBoundedBody(req, res, LIMIT);
    if (body === undefined) {
      res.writeHead(413, { "content-type": "text/plain" });
      res.end("too large");
      return;
    }
    res.writeHead(200, { "content-type": "text/plain" });
    res.end(String(body.length));
  });
  server.on("connection", (socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { port, bytesRead: () => sockets.reduce((sum, socket) => sum + socket.bytesRead, 0) };
}

/** Opens a raw connection; resolves what the server sent once it closes the connection. */
function rawRequest(
  port: number,
  write: (socket: Socket) => void,
): Promise<{ response: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let response = "";
    socket.setEncoding("utf8");
    socket.on("data", (text: string) => {
      response += text;
    });
    socket.on("error", () => {
      // The server may reset a connection it stopped reading; what it answered first is what the test checks.
    });
    socket.on("close", () => resolve({ response, closed: true }));
    socket.on("connect", () => write(socket));
  });
}

describe("readBoundedBody", () => {
  it("reads a body within the cap whole", async () => {
    const { port } = await startServer();
    const body = "x".repeat(LIMIT);
    const response = await fetch(`http://127.0.0.1:${port}/`, { method: "POST", body });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(String(LIMIT));
  });

  it("refuses a declared Content-Length above the cap without reading the body, and closes the connection", async () => {
    const { port, bytesRead } = await startServer();
    const result = await rawRequest(port, (socket) => {
      // Headers promise 50 MB; only the headers and a little of the body are ever sent, and the socket stays open
      // (a drained body would keep the server waiting for the rest).
      socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\n`);
      socket.write("y".repeat(1000));
    });
    expect(result.response).toMatch(/^HTTP\/1\.1 413 /);
    expect(result.response.toLowerCase()).toContain("connection: close");
    expect(bytesRead()).toBeLessThan(LIMIT);
  });

  it("stops reading a chunked body at the cap and closes the connection while the client is still sending", async () => {
    const { port, bytesRead } = await startServer();
    let sent = 0;
    const result = await rawRequest(port, (socket) => {
      socket.write("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
      const chunk = "z".repeat(1024);
      const frame = `${chunk.length.toString(16)}\r\n${chunk}\r\n`;
      // An endless upload: it ends only when the server closes the connection.
      const pump = (): void => {
        if (socket.destroyed) return;
        sent += chunk.length;
        if (socket.write(frame)) setImmediate(pump);
        else socket.once("drain", pump);
      };
      pump();
    });
    expect(result.response).toMatch(/^HTTP\/1\.1 413 /);
    expect(result.closed).toBe(true);
    // It stopped reading soon after the cap (socket buffers, not the whole upload).
    expect(bytesRead()).toBeLessThan(4 * 1024 * 1024);
    expect(sent).toBeGreaterThan(LIMIT);
  });
});

describe("closeAfterBodyfulRequest", () => {
  /** A server that refuses every request with 401 before reading anything, as an unauthorised API call is. */
  async function startRefusingServer(): Promise<{ port: number; bytesRead: () => number }> {
    const sockets: Socket[] = [];
    server = createServer((req, res) => {
      closeAfterBodyfulRequest(req, res);
      res.writeHead(401);
      res.end();
    });
    server.on("connection", (socket) => sockets.push(socket));
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return { port, bytesRead: () => sockets.reduce((sum, socket) => sum + socket.bytesRead, 0) };
  }

  it("ends the connection after a refusal sent before the body was read, while the client is still uploading", async () => {
    const { port, bytesRead } = await startRefusingServer();
    const result = await rawRequest(port, (socket) => {
      socket.write(`POST /api/messages HTTP/1.1\r\nHost: x\r\nContent-Length: ${1024 * 1024 * 1024}\r\n\r\n`);
      const chunk = "u".repeat(64 * 1024);
      const pump = (): void => {
        if (socket.destroyed) return;
        if (socket.write(chunk)) setImmediate(pump);
        else socket.once("drain", pump);
      };
      pump();
    });
    // The 401 is sent first; whether this client still reads it depends on whether the server's close (with the
    // upload unread, a reset) overtakes it — a stranger's upload gets an answer or a reset, never a reader.
    if (result.response !== "") expect(result.response.toLowerCase()).toContain("connection: close");
    expect(result.closed).toBe(true);
    // Without it Node reads and discards the whole gigabyte to keep the connection alive.
    expect(bytesRead()).toBeLessThan(64 * 1024 * 1024);
  });

  it("leaves a request without a body on a kept-alive connection", async () => {
    const { port } = await startRefusingServer();
    const response = await fetch(`http://127.0.0.1:${port}/`);
    expect(response.status).toBe(401);
    expect(response.headers.get("connection")).not.toBe("close");
  });
});

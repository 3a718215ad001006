// Fault injection: the queue of faults a test asks for (`failNext`) and how each is served — the JSON errors
// Telegram gives (429 with `retry_after`, 500, 401, 400 "can't parse entities"), nginx's HTML 502 page and a
// reset connection. Owns matching a call to the next fault and writing it; does not own routing (http-front.ts).
import type http from "node:http";
import type { CallLog, RecordedCall } from "./call-log.ts";

export type FaultKind =
  | "rate_limit"
  | "server_error"
  | "bad_gateway"
  | "reset"
  | "unauthorized"
  | "parse_entities";

export interface Fault {
  readonly kind: FaultKind;
  /** Only calls of this method (case-insensitive); default: any method. */
  readonly method?: string;
  /** How many matching calls fail (default 1). */
  readonly times?: number;
  /** `rate_limit` only: seconds in `parameters.retry_after` (default 1). */
  readonly retryAfter?: number;
}

export class FaultQueue {
  #faults: { fault: Fault; left: number }[] = [];

  /** Faults queue in order; each serves `times` matching calls. */
  add(fault: Fault): void {
    this.#faults.push({ fault, left: fault.times ?? 1 });
  }

  /** The fault the next call of `method` meets, counted as used; undefined when none matches. */
  take(method: string): Fault | undefined {
    const index = this.#faults.findIndex(
      (entry) =>
        entry.fault.method === undefined || entry.fault.method.toLowerCase() === method.toLowerCase(),
    );
    const entry = this.#faults[index];
    if (entry === undefined) return undefined;
    entry.left -= 1;
    if (entry.left <= 0) this.#faults = this.#faults.filter((_, i) => i !== index);
    return entry.fault;
  }
}

export function serveFault(fault: Fault, res: http.ServerResponse, call: RecordedCall, log: CallLog): void {
  switch (fault.kind) {
    case "rate_limit": {
      const retryAfter = fault.retryAfter ?? 1;
      log.answer(res, call, {
        ok: false,
        error_code: 429,
        description: `Too Many Requests: retry after ${retryAfter}`,
        parameters: { retry_after: retryAfter },
      });
      return;
    }
    case "server_error":
      log.answer(res, call, { ok: false, error_code: 500, description: "Internal Server Error" });
      return;
    case "unauthorized":
      log.answer(res, call, { ok: false, error_code: 401, description: "Unauthorized" });
      return;
    case "parse_entities":
      log.answer(res, call, {
        ok: false,
        error_code: 400,
        description:
          "Bad Request: can't parse entities: Can't find end of the entity starting at byte offset 0",
      });
      return;
    case "bad_gateway": {
      // what Telegram's nginx front answers when the backend is down: HTML, not the JSON envelope
      call.served = "error:502";
      const html =
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.18.0</center>\r\n</body>\r\n</html>\r\n";
      res.writeHead(502, { "content-type": "text/html", "content-length": Buffer.byteLength(html) });
      res.end(html);
      log.notify(call);
      return;
    }
    case "reset":
      call.served = "reset";
      res.socket?.destroy();
      log.notify(call);
      return;
  }
}

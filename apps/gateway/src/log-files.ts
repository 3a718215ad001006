// The gateway's structured logs: pino records (one JSON object a line) in files under `<state dir>/logs/` that
// pino-roll rotates (by size and daily, the newest few kept), and the same events as short human lines on
// stderr. Also finds the log files for `logs` (newest last). Does not own reading them out (logs-cli.ts).
import { once } from "node:events";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import pino, { type Logger } from "pino";
import roll from "pino-roll";

/** The base name of the log files: `gateway.<n>.log`, n growing with each rotation. */
export const LOG_FILE_BASE = "gateway";

/** Where the gateway's log files live. */
export function logDir(stateDir: string): string {
  return join(stateDir, "logs");
}

/** The gateway's log files, oldest first (by their rotation number). */
export function logFiles(stateDir: string): string[] {
  const dir = logDir(stateDir);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const numbered = names
    .map((name) => ({ name, match: /^gateway\.(?:(\d{4}-\d{2}-\d{2})\.)?(\d+)\.log$/.exec(name) }))
    .filter((entry) => entry.match !== null)
    .map((entry) => ({
      path: join(dir, entry.name),
      date: entry.match?.[1] ?? "",
      count: Number(entry.match?.[2]),
    }));
  numbered.sort((a, b) => a.date.localeCompare(b.date) || a.count - b.count);
  return numbered.map((entry) => entry.path);
}

/** The gateway's logger: each event to stderr as a line and to the rotating files as a pino record. */
export interface GatewayLog {
  /** An event: a human line on stderr, a record in the log file (`fields` plus `msg`). */
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  /** Flushes the file. */
  close(): Promise<void>;
}

/** Where the log files go, where the human lines go, and how the files rotate. */
export interface OpenGatewayLogOptions {
  readonly stateDir: string;
  readonly stderr: { write(text: string): unknown };
  /** Rotate past this size (pino-roll units); default "10m". */
  readonly size?: string;
  /** Rotated files kept; default 7. */
  readonly keep?: number;
}

/** Opens the rotating log files and returns the gateway's logger. */
export async function openGatewayLog(options: OpenGatewayLogOptions): Promise<GatewayLog> {
  const stream = await roll({
    file: join(logDir(options.stateDir), LOG_FILE_BASE),
    extension: ".log",
    size: options.size ?? "10m",
    frequency: "daily",
    mkdir: true,
    limit: { count: options.keep ?? 7 },
  });
  const logger: Logger = pino(
    { base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime },
    stream,
  );
  const emit =
    (level: "info" | "warn" | "error") =>
    (message: string, fields: Record<string, unknown> = {}): void => {
      options.stderr.write(`[gateway] ${message}\n`);
      logger[level](fields, message);
    };
  return {
    info: emit("info"),
    warn: emit("warn"),
    error: emit("error"),
    async close() {
      // end() waits for the file to be open (sonic-boom opens it asynchronously), flushes, then closes it.
      const closed = once(stream, "close");
      stream.end();
      await closed;
    },
  };
}

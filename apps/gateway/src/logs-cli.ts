// Reading the gateway's log files for `logs`: the last n records across the rotated files, then (following)
// new records as they are appended, moving on to the next file when pino-roll rotates. Pretty lines (time,
// level, message, the record's other fields) or the records as stored (`--json`). Owns only reading and
// printing; the files are written by log-files.ts.
import { closeSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import type { GatewayCliIo } from "./cli.ts";
import { logFiles } from "./log-files.ts";

const LEVELS: Record<number, { name: string; colour: string }> = {
  10: { name: "TRACE", colour: "\u001b[90m" },
  20: { name: "DEBUG", colour: "\u001b[90m" },
  30: { name: "INFO", colour: "\u001b[32m" },
  40: { name: "WARN", colour: "\u001b[33m" },
  50: { name: "ERROR", colour: "\u001b[31m" },
  60: { name: "FATAL", colour: "\u001b[35m" },
};
const RESET = "\u001b[0m";
const DIM = "\u001b[2m";

/** One stored record as a human line: `HH:MM:SS.mmm LEVEL message key=value…`. */
export function prettyRecord(line: string, colour: boolean): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const { time, level, msg, pid: _pid, hostname: _hostname, ...rest } = record;
  const clock = typeof time === "string" ? (time.split("T")[1]?.replace("Z", "") ?? time) : "";
  const known = LEVELS[Number(level)] ?? { name: String(level), colour: "" };
  const fields = Object.entries(rest)
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join(" ");
  const levelText = known.name.padEnd(5);
  return colour
    ? `${DIM}${clock}${RESET} ${known.colour}${levelText}${RESET} ${String(msg ?? "")}${fields ? ` ${DIM}${fields}${RESET}` : ""}`
    : `${clock} ${levelText} ${String(msg ?? "")}${fields ? ` ${fields}` : ""}`;
}

export interface PrintLogsOptions {
  readonly stateDir: string;
  readonly io: GatewayCliIo;
  readonly json: boolean;
  readonly lines: number;
  readonly colour: boolean;
  /** Follow until this signal aborts; undefined: print and return. */
  readonly follow: AbortSignal | undefined;
}

/** Prints the last records and, following, every new one; resolves to the exit code. */
export async function printLogs(options: PrintLogsOptions): Promise<number> {
  const { io } = options;
  const show = (line: string) => {
    if (line.trim() === "") return;
    io.stdout.write(`${options.json ? line : prettyRecord(line, options.colour)}\n`);
  };
  const files = logFiles(options.stateDir);
  if (files.length === 0 && options.follow === undefined) {
    io.stderr.write(`agent-kernel logs: no gateway logs yet under ${options.stateDir}/logs\n`);
    return 1;
  }
  const tail: string[] = [];
  for (const file of files) {
    for (const line of readFileSync(file, "utf8").split("\n")) if (line.trim() !== "") tail.push(line);
    while (tail.length > options.lines) tail.shift();
  }
  for (const line of tail) show(line);
  const signal = options.follow;
  if (signal === undefined) return 0;

  // Following: the newest file from its current end; a newer file (a rotation) is read from its start.
  let current = files.at(-1);
  let offset = current === undefined ? 0 : statSync(current).size;
  let partial = "";
  const readNew = () => {
    const newest = logFiles(options.stateDir).at(-1);
    if (current === undefined || (newest !== undefined && newest !== current)) {
      if (current !== undefined) drain(current);
      current = newest;
      offset = 0;
      partial = "";
    }
    if (current !== undefined) drain(current);
  };
  const drain = (file: string) => {
    let size: number;
    try {
      size = statSync(file).size;
    } catch {
      return;
    }
    if (size < offset) offset = 0;
    if (size === offset) return;
    const buffer = Buffer.alloc(size - offset);
    const fd = openSync(file, "r");
    try {
      readSync(fd, buffer, 0, buffer.length, offset);
    } finally {
      closeSync(fd);
    }
    offset = size;
    const lines = (partial + buffer.toString("utf8")).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) show(line);
  };
  await new Promise<void>((resolve) => {
    const timer = setInterval(readNew, 200);
    const stop = () => {
      clearInterval(timer);
      readNew();
      resolve();
    };
    if (signal.aborted) return stop();
    signal.addEventListener("abort", stop, { once: true });
  });
  return signal.reason === "SIGTERM" ? 143 : 130;
}

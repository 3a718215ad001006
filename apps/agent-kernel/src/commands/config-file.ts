// `agent-kernel config get|set`: one config value by its path (`agents.defaults.model`,
// `channels.telegram.enabled`, `agents.defaults.models["openai/gpt-5"].alias`). get reads the loaded config
// (defaults filled in, secrets redacted); set changes the file, checks the whole result with the config's own
// schema before writing (an invalid value is refused, naming the key), and writes it atomically, owner-only.
// JSON5 has no writer that keeps comments: when the file had comments they are lost, the command says so
// and the file before the change is kept beside it as `<file>.bak`. Owns paths, parsing values and writing.
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { ConfigError, parseConfig, redactSecrets } from "@agent-kernel/config";
import JSON5 from "json5";
import { COMMON_FLAGS_HELP, expectArgs, parseCommand, subcommand } from "../args.ts";
import { configTargetOf, loadOperationContext } from "../context.ts";
import { CliError, EXIT } from "../errors.ts";
import { type CliIo, line, paint, printJson } from "../io.ts";

const USAGE = `Usage:
  agent-kernel config get [<path>] [--json]
  agent-kernel config set <path> <value>

<path> is dot-separated; a key with dots or slashes goes in brackets and quotes:
agents.defaults.models["openai/gpt-5"].alias. <value> is read as JSON5 (true, 42, "text", [1, 2], { a: 1 })
and, when it is not JSON5, as text. set checks the whole config before it writes; comments in the file are
not kept (JSON5 has no comment-keeping writer): the command says so and keeps the old file as <file>.bak.

Examples:
  agent-kernel config get agents.defaults.model
  agent-kernel config set session.dmScope per-peer
  agent-kernel config set channels.telegram.enabled false

Exit codes: 0 ok; 2 usage, a bad path, or a value the config does not accept; 3 get: no value at that path.

${COMMON_FLAGS_HELP}`;

type Segment = string | number;

/** `a.b[0]["c.d"]` → ["a", "b", 0, "c.d"]. */
export function parseConfigPath(path: string): Segment[] {
  const segments: Segment[] = [];
  const pattern = /\s*(?:\[\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|(\d+))\s*\]|([^.[\]]+))\s*(\.)?/gy;
  let at = 0;
  while (at < path.length) {
    pattern.lastIndex = at;
    const match = pattern.exec(path);
    if (match === null || match[0] === "")
      throw new CliError(EXIT.usage, `"${path}" is not a config path (at character ${at + 1})`);
    const [, double, single, index, bare] = match;
    if (index !== undefined) segments.push(Number(index));
    else if (bare !== undefined) segments.push(/^\d+$/.test(bare) ? Number(bare) : bare);
    else segments.push(JSON.parse(`"${double ?? (single ?? "").replaceAll('"', '\\"')}"`) as string);
    at = pattern.lastIndex;
  }
  if (segments.length === 0) throw new CliError(EXIT.usage, "the config path is empty");
  return segments;
}

function valueAt(root: unknown, segments: readonly Segment[]): { found: boolean; value?: unknown } {
  let node = root;
  for (const segment of segments) {
    if (node === null || typeof node !== "object" || !(segment in (node as object))) return { found: false };
    node = (node as Record<string | number, unknown>)[segment];
  }
  return { found: true, value: node };
}

function setAt(root: Record<string, unknown>, segments: readonly Segment[], value: unknown): void {
  let node: Record<string | number, unknown> = root;
  segments.slice(0, -1).forEach((segment, index) => {
    const next = node[segment];
    if (next === undefined) {
      node[segment] = typeof segments[index + 1] === "number" ? [] : {};
    } else if (next === null || typeof next !== "object") {
      const where = segments.slice(0, index + 1).join(".");
      throw new CliError(
        EXIT.usage,
        `${where} is ${JSON.stringify(next)}, not an object: cannot set a key inside it`,
      );
    }
    node = node[segment] as Record<string | number, unknown>;
  });
  node[segments.at(-1) as Segment] = value;
}

/** True when JSON5 text has a comment outside its strings. */
export function hasComments(text: string): boolean {
  let quote: string | undefined;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (quote !== undefined) {
      if (char === "\\") index++;
      else if (char === quote) quote = undefined;
    } else if (char === '"' || char === "'") quote = char;
    else if (char === "/" && (text[index + 1] === "/" || text[index + 1] === "*")) return true;
  }
  return false;
}

/** `config …`; resolves to the exit code. */
export async function runConfig(argv: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommand(argv, {}, USAGE, io);
  if (parsed === undefined) return EXIT.ok;
  const { name, rest } = subcommand(parsed, "config", ["get", "set"], USAGE);
  if (name === "get") {
    if (rest.length > 1)
      throw new CliError(EXIT.usage, `config get takes at most one <path>, got "${rest.join(" ")}"`);
    const context = loadOperationContext(parsed.values, io);
    const config = redactSecrets(context.config);
    const { found, value } =
      rest[0] === undefined ? { found: true, value: config } : valueAt(config, parseConfigPath(rest[0]));
    if (!found) throw new CliError(EXIT.notFound, `the config has no value at ${rest[0]}`);
    if (parsed.values.json === true || (value !== null && typeof value === "object"))
      printJson(io, value ?? null);
    else line(io.stdout, String(value));
    return EXIT.ok;
  }
  const [path, raw] = expectArgs(rest, ["path", "value"], "config set") as [string, string];
  const segments = parseConfigPath(path);
  const file = configTargetOf(parsed.values, io);
  const exists = existsSync(file);
  const text = exists ? readFileSync(file, "utf8") : "";
  let document: Record<string, unknown>;
  try {
    document = text.trim() === "" ? {} : (JSON5.parse(text) as Record<string, unknown>);
  } catch (error) {
    throw new CliError(EXIT.usage, `${file} is not valid JSON5 (${(error as Error).message}); fix it first`);
  }
  let value: unknown;
  try {
    value = JSON5.parse(raw);
  } catch {
    value = raw;
  }
  setAt(document, segments, value);
  try {
    parseConfig(document, { env: io.env, sourceName: file });
  } catch (error) {
    if (error instanceof ConfigError)
      throw new CliError(EXIT.usage, `not changed, the config would be invalid:\n${error.message}`);
    throw error;
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const commented = hasComments(text);
  if (commented) copyFileSync(file, `${file}.bak`);
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON5.stringify(document, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, file);
  line(io.stdout, `${path} = ${JSON.stringify(value)} (${file})`);
  if (commented) {
    line(
      io.stderr,
      paint(
        io,
        io.stderr,
        "yellow",
        `agent-kernel: note: the comments in ${file} were not kept (JSON5 has no comment-keeping writer); the file before this change is ${file}.bak`,
      ),
    );
  }
  return EXIT.ok;
}

// `agent-kernel setup`: a first config and the workspace's bootstrap files, so `agent-kernel agent -m hi`
// works after one command. The config is written only when none exists (an existing one is left as it is
// and used), checked with the config's schema first, owner-only. The workspace gets the files the kernel
// puts in the system prompt — AGENTS.md, SOUL.md, TOOLS.md, IDENTITY.md, USER.md — each only when missing
// (never overwritten), and BOOTSTRAP.md (the first-run ritual) only for a brand-new workspace: one with none
// of the other bootstrap files, so a BOOTSTRAP.md deleted after its ritual is never recreated (OpenClaw's
// rule). `agents.defaults.skipBootstrap: true` writes no bootstrap file. Owns the templates and the writes.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { ConfigError, parseConfig } from "@agent-kernel/config";
import { COMMON_FLAGS_HELP, expectArgs, parseCommand, stringFlag } from "../args.ts";
import { configTargetOf, expandPath, loadOperationContext } from "../context.ts";
import { CliError, EXIT } from "../errors.ts";
import { type CliIo, line, paint, printJson } from "../io.ts";

const USAGE = `Usage:
  agent-kernel setup [--workspace <dir>] [--model <provider/model>] [--json]

Writes a config (only when there is none: $AGENT_KERNEL_CONFIG, --config, else ~/.agent-kernel/config.json5)
and the workspace's bootstrap files (AGENTS.md, SOUL.md, TOOLS.md, IDENTITY.md, USER.md; BOOTSTRAP.md only for
a brand-new workspace). Existing files are never overwritten. Keys stay in the environment
(ANTHROPIC_API_KEY, OPENAI_API_KEY, …): the config refers to them, it never holds them.

Examples:
  agent-kernel setup
  agent-kernel setup --workspace ~/assistant --model openai/gpt-5-mini

${COMMON_FLAGS_HELP}`;

/** The bootstrap files and their first content (BOOTSTRAP.md apart: only for a brand-new workspace). */
export const BOOTSTRAP_TEMPLATES: Readonly<Record<string, string>> = {
  "AGENTS.md": `# AGENTS.md

How this assistant works. Edit freely: this file is part of the system prompt of every new session.

- Answer briefly and say what you did.
- Ask before anything destructive (deleting files, sending messages to others).
- Write what you learn and want to keep into this workspace (notes, lists) and mention where.
`,
  "SOUL.md": `# SOUL.md

Persona, boundaries and tone. For example: friendly, direct, no filler; admits what it does not know.
`,
  "TOOLS.md": `# TOOLS.md

Notes on the tools and conventions here (which commands to use, where things are). This file does not decide
which tools exist: the config's tool policy does.
`,
  "IDENTITY.md": `# IDENTITY.md

Name:
Emoji:
Vibe:
`,
  "USER.md": `# USER.md

Who the assistant works for, and how to address them.

Name:
Preferred address:
Time zone:
`,
};

const BOOTSTRAP_RITUAL = `# BOOTSTRAP.md

First run. This workspace is new: get to know the person you work for.

1. Ask their name, how to address them and their time zone; write it into USER.md.
2. Agree on your name, emoji and vibe; write them into IDENTITY.md.
3. Ask how they like answers (length, tone, language); write it into SOUL.md.
4. Then delete this file: the ritual is done and will not be repeated.
`;

/** `setup`; resolves to the exit code. */
export async function runSetup(argv: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommand(argv, { workspace: { type: "string" }, model: { type: "string" } }, USAGE, io);
  if (parsed === undefined) return EXIT.ok;
  expectArgs(parsed.positionals, [], "setup");
  const target = configTargetOf(parsed.values, io);
  const written: string[] = [];
  const kept: string[] = [];

  let configWritten = false;
  if (!existsSync(target)) {
    const workspace = stringFlag(parsed, "workspace") ?? join(homedir(), ".agent-kernel", "workspace");
    const model = stringFlag(parsed, "model") ?? "anthropic/claude-sonnet-4-5";
    const text = configTemplate(model, workspace);
    try {
      parseConfig(JSON.parse(JSON.stringify({ agents: { defaults: { model, workspace } } })), {
        env: io.env,
        sourceName: target,
      });
    } catch (error) {
      if (error instanceof ConfigError) throw new CliError(EXIT.usage, error.message);
      throw error;
    }
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    writeFileSync(target, text, { mode: 0o600, flag: "wx" });
    written.push(target);
    configWritten = true;
  } else {
    kept.push(target);
  }

  const context = loadOperationContext(parsed.values, io);
  const defaults = context.config.agents.defaults;
  const workspaceGiven = stringFlag(parsed, "workspace");
  const workspace = expandPath(
    configWritten || workspaceGiven === undefined
      ? (defaults.workspace ?? join(homedir(), ".agent-kernel", "workspace"))
      : workspaceGiven,
    io.cwd,
  );
  mkdirSync(workspace, { recursive: true, mode: 0o700 });
  const skip = defaults.skipBootstrap === true;
  if (!skip) {
    const present = Object.keys(BOOTSTRAP_TEMPLATES).filter((name) => existsSync(join(workspace, name)));
    const brandNew = present.length === 0 && !existsSync(join(workspace, "BOOTSTRAP.md"));
    for (const [name, content] of Object.entries(BOOTSTRAP_TEMPLATES)) {
      const file = join(workspace, name);
      if (existsSync(file)) kept.push(file);
      else {
        writeFileSync(file, content, { mode: 0o600, flag: "wx" });
        written.push(file);
      }
    }
    if (brandNew) {
      writeFileSync(join(workspace, "BOOTSTRAP.md"), BOOTSTRAP_RITUAL, { mode: 0o600, flag: "wx" });
      written.push(join(workspace, "BOOTSTRAP.md"));
    }
  }

  if (parsed.values.json === true) {
    printJson(io, { config: target, workspace, written, kept, bootstrapSkipped: skip });
    return EXIT.ok;
  }
  for (const file of written) line(io.stdout, `${paint(io, io.stdout, "green", "wrote")} ${file}`);
  for (const file of kept) line(io.stdout, `${paint(io, io.stdout, "dim", "kept ")} ${file} (exists)`);
  if (skip) line(io.stdout, "No bootstrap files: agents.defaults.skipBootstrap is true.");
  line(io.stdout, "");
  line(io.stdout, "Next: set your provider's key in the environment (e.g. ANTHROPIC_API_KEY), then:");
  line(io.stdout, "  agent-kernel doctor");
  line(io.stdout, '  agent-kernel agent -m "hello"');
  return EXIT.ok;
}

function configTemplate(model: string, workspace: string): string {
  return `// Agent Session Kernel config, written by \`agent-kernel setup\` (JSON5: comments and trailing commas are fine).
// Check it: agent-kernel doctor. Change one value: agent-kernel config set <path> <value> (that rewrites the
// file without its comments). Keys stay in the environment; write them as "\${NAME}" references, never here.
{
  agents: {
    defaults: {
      model: ${JSON.stringify(model)},
      workspace: ${JSON.stringify(workspace)},
    },
  },
  // Channels for \`agent-kernel gateway\`, e.g.:
  // channels: { telegram: { enabled: true, botToken: "\${TELEGRAM_BOT_TOKEN}", dmPolicy: "pairing" } },
}
`;
}

// `agent-kernel doctor [--fix] [--offline]`: one check of everything a running assistant needs — the config
// (it loads; a file others can read that holds secrets), the keys (each agent's primary model has one), the
// channels (credentials set; their APIs answer), model reachability (each custom provider's server answers),
// the store and the sandbox (the `agent doctor` check, run in-process: migrations, damaged rows, broken
// branches, the sandbox engine and who may run unsandboxed) and the workspace. `--fix` does only what is
// safe and undoable: owner-only permissions on the config file and the state dir, a missing workspace
// folder created. Owns the sections and their verdicts; the checks themselves are the parts' own.
import { chmodSync, existsSync, mkdirSync, statSync } from "node:fs";
import { checkConfigFileExposure, listAgentIds, resolveAgentConfig } from "@agent-kernel/config";
import { runApp } from "../apps.ts";
import { COMMON_FLAGS_HELP, expectArgs, parseCommand } from "../args.ts";
import { expandPath, loadOperationContext, type OperationContext } from "../context.ts";
import { EXIT } from "../errors.ts";
import { type CliIo, line, paint, printJson } from "../io.ts";
import { probeChannel, summarizeChannels } from "./channels.ts";
import { modelUses, providerKeys } from "./models.ts";

const USAGE = `Usage:
  agent-kernel doctor [--fix] [--offline] [--agent <id>] [--json]

Checks the config, the keys, the channels (credentials, and their APIs unless --offline), model reachability
(custom providers' servers, unless --offline), the store and the sandbox, and the workspace. Exit 1 when a
problem is left. --fix makes the config file and the state dir owner-only and creates a missing workspace
folder; nothing else is changed.

Examples:
  agent-kernel doctor
  agent-kernel doctor --fix
  agent-kernel doctor --offline --json

${COMMON_FLAGS_HELP}`;

/** One finding. */
export interface DoctorCheck {
  readonly area: "config" | "keys" | "channels" | "models" | "store" | "sandbox" | "workspace";
  readonly status: "ok" | "warning" | "problem" | "fixed";
  readonly message: string;
}

/** `doctor …`; resolves to the exit code (1 when a problem is left). */
export async function runDoctorCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommand(
    argv,
    { fix: { type: "boolean" }, offline: { type: "boolean" }, agent: { type: "string" } },
    USAGE,
    io,
  );
  if (parsed === undefined) return EXIT.ok;
  expectArgs(parsed.positionals, [], "doctor");
  const fix = parsed.values.fix === true;
  const offline = parsed.values.offline === true;
  const checks: DoctorCheck[] = [];
  const add = (check: DoctorCheck) => checks.push(check);

  let context: OperationContext;
  try {
    context = loadOperationContext(parsed.values, io);
  } catch (error) {
    add({ area: "config", status: "problem", message: (error as Error).message });
    return report(io, checks, parsed.values.json === true);
  }
  const { config } = context;
  add({
    area: "config",
    status: "ok",
    message:
      context.configPath === undefined
        ? "no config file: defaults (agent-kernel setup writes one)"
        : `${context.configPath} is valid`,
  });
  if (context.configPath !== undefined) {
    for (const exposure of checkConfigFileExposure(context.configPath)) {
      if (fix) {
        chmodSync(context.configPath, 0o600);
        add({
          area: "config",
          status: "fixed",
          message: `${context.configPath} made owner-only (0600): it holds secrets`,
        });
      } else
        add({
          area: "config",
          status: "problem",
          message: `${exposure.message} (doctor --fix makes it 0600)`,
        });
    }
  }

  // Keys: each agent's primary model needs one; a fallback without one is only a warning.
  const agents = listAgentIds(config);
  const uses = modelUses(config, agents).filter((use) => use.role === "primary" || use.role === "fallback");
  const keys = await providerKeys(
    config,
    io.env,
    uses.map((use) => use.ref.split("/")[0]?.toLowerCase() ?? use.ref),
  );
  const keyOf = new Map(keys.map((key) => [key.provider, key]));
  for (const use of uses) {
    const key = keyOf.get(use.ref.split("/")[0]?.toLowerCase() ?? "");
    if (key === undefined) continue;
    if (key.usable)
      add({
        area: "keys",
        status: "ok",
        message: `${use.ref} (${use.role} of ${use.agentId}): ${key.source}`,
      });
    else {
      add({
        area: "keys",
        status: use.role === "primary" ? "problem" : "warning",
        message: `${use.ref} (${use.role} of ${use.agentId}) has no key: ${key.hint}`,
      });
    }
  }
  if (uses.length === 0)
    add({ area: "keys", status: "warning", message: "no model is configured (agents.defaults.model)" });

  // Channels: credentials, then their APIs.
  for (const channel of summarizeChannels(config.channels).filter((summary) => summary.enabled)) {
    const missing = Object.entries(channel.credentials)
      .filter(([, set]) => !set)
      .map(([key]) => `channels.${channel.id}.${key}`);
    if (missing.length > 0) {
      add({ area: "channels", status: "problem", message: `${channel.id}: ${missing.join(", ")} not set` });
      continue;
    }
    if (offline) {
      add({ area: "channels", status: "ok", message: `${channel.id}: configured (not probed: --offline)` });
      continue;
    }
    const probe = await probeChannel(channel.id, config.channels);
    // The web chat answers only while the gateway runs: not a fault of the config.
    const status = probe.ok ? "ok" : channel.id === "webchat" ? "warning" : "problem";
    add({ area: "channels", status, message: `${channel.id}: ${probe.detail}` });
  }

  // Model reachability: the custom providers' servers (hosted providers are checked by their key above).
  for (const [provider, custom] of Object.entries(config.models.providers)) {
    if (offline) break;
    try {
      const response = await fetch(custom.baseUrl, { signal: AbortSignal.timeout(10_000) });
      await response.body?.cancel();
      add({
        area: "models",
        status: "ok",
        message: `${provider}: ${custom.baseUrl} answers (HTTP ${response.status})`,
      });
    } catch (error) {
      const cause =
        error instanceof Error && error.cause instanceof Error
          ? error.cause.message
          : (error as Error).message;
      add({
        area: "models",
        status: "problem",
        message: `${provider}: ${custom.baseUrl} does not answer (${cause})`,
      });
    }
  }

  // The state dir: owner-only (it holds transcripts and channel state).
  if (existsSync(context.stateDir) && config.store.driver !== "postgres") {
    const mode = statSync(context.stateDir).mode & 0o777;
    if ((mode & 0o077) !== 0) {
      if (fix) {
        chmodSync(context.stateDir, 0o700);
        add({ area: "store", status: "fixed", message: `${context.stateDir} made owner-only (0700)` });
      } else {
        add({
          area: "store",
          status: "problem",
          message: `${context.stateDir} is readable by others (mode ${mode.toString(8)}); doctor --fix makes it 0700`,
        });
      }
    }
  }

  // The store and the sandbox: the agent app's doctor, in-process, as JSON.
  const out: string[] = [];
  const err: string[] = [];
  const agentArgs = [
    "doctor",
    "--json",
    "--state-dir",
    context.stateDir,
    ...(context.configPath === undefined ? [] : ["--config", context.configPath]),
    ...(typeof parsed.values.agent === "string" ? ["--agent", parsed.values.agent] : []),
  ];
  const code = await runApp("agent", agentArgs, {
    stdout: { write: (text: string) => out.push(text) },
    stderr: { write: (text: string) => err.push(text) },
    env: io.env,
    cwd: io.cwd,
  });
  if (code === EXIT.ok || code === EXIT.failed) {
    const store = JSON.parse(out.join("")) as {
      stateDir: string;
      schema: { version: number; latestVersion: number };
      checked: { sessions: number; transcripts: number; runs: number };
      problems: { where: string; problem: string }[];
      security: {
        sandboxes: {
          agentId: string;
          mode: string;
          engine?: string;
          status: { available: boolean; version?: string; processLimit?: string };
        }[];
        warnings: { where: string; warning: string }[];
      };
    };
    add({
      area: "store",
      status: "ok",
      message: `schema ${store.schema.version} of ${store.schema.latestVersion}; ${store.checked.sessions} sessions, ${store.checked.runs} runs checked`,
    });
    for (const problem of store.problems)
      add({ area: "store", status: "problem", message: `${problem.where}: ${problem.problem}` });
    for (const sandbox of store.security.sandboxes) {
      add({
        area: "sandbox",
        status: sandbox.status.available ? "ok" : "problem",
        message: `agent ${sandbox.agentId} (mode ${sandbox.mode}): ${sandbox.status.available ? `${sandbox.status.version ?? "available"}` : `${sandbox.engine ?? "the engine"} unavailable`}`,
      });
    }
    for (const warning of store.security.warnings)
      add({ area: "sandbox", status: "warning", message: `${warning.where}: ${warning.warning}` });
  } else {
    add({
      area: "store",
      status: "problem",
      message:
        err
          .join("")
          .trim()
          .replace(/^agent: /, "") || `the store check failed (exit ${code})`,
    });
  }

  // Workspaces: each agent's folder exists.
  const seen = new Set<string>();
  for (const agentId of agents) {
    const workspace = resolveAgentConfig(config, agentId)?.workspace;
    if (workspace === undefined) continue;
    const dir = expandPath(workspace, io.cwd);
    if (seen.has(dir) || existsSync(dir)) continue;
    seen.add(dir);
    if (fix) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      add({
        area: "workspace",
        status: "fixed",
        message: `created ${dir} (agent ${agentId}); agent-kernel setup writes its bootstrap files`,
      });
    } else
      add({
        area: "workspace",
        status: "problem",
        message: `${dir} (agent ${agentId}) does not exist; doctor --fix or agent-kernel setup creates it`,
      });
  }
  return report(io, checks, parsed.values.json === true);
}

function report(io: CliIo, checks: readonly DoctorCheck[], json: boolean): number {
  const problems = checks.filter((check) => check.status === "problem").length;
  if (json) printJson(io, { ok: problems === 0, checks });
  else {
    const styles = { ok: "green", warning: "yellow", problem: "red", fixed: "green" } as const;
    for (const check of checks) {
      const status = paint(io, io.stdout, styles[check.status], check.status.padEnd(7));
      line(io.stdout, `${status} ${check.area.padEnd(9)} ${check.message}`);
    }
    const warnings = checks.filter((check) => check.status === "warning").length;
    line(
      io.stdout,
      problems === 0
        ? `No problems${warnings > 0 ? ` (${warnings} warning(s))` : ""}.`
        : `${problems} problem(s).`,
    );
  }
  return problems === 0 ? EXIT.ok : EXIT.failed;
}

// "Every command in the README and in each app's README run by a test exactly as written." The commands are
// read out of README.md and apps/*/README.md (readme-commands.ts) and each must be in the checked list below,
// which says what it is and how it is covered:
// - run: this test runs it exactly as written (`sh -c`, the README's text), in a scratch home with a config
//   whose provider is tooling/fake-llm and whose Telegram is tooling/fake-telegram, and checks its exit code;
//   the commands a README shows without a path (`agent`, `agent-cron`, `agent-kernel`, …) are on PATH as the
//   apps' own entries. A long-running one (a daemon) is started, must still run once it said it is up, and
//   must stop on its signal with the documented code.
// - synopsis: a usage line with placeholders (`<runId>`, `[--json]`, `a | b`): not runnable as written; the
//   concrete commands it stands for are run instead (each written here in full).
// - environment: an `export NAME=…` line a reader adapts; nothing to run.
// - elsewhere: run exactly by another file (the CI entry, the registry round trip), which must contain it.
// A README command missing from the list, or a list entry no README shows any more, fails the test.
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { PairingStore } from "@agent-kernel/channels-core";
import { reply } from "@agent-kernel/fake-llm";
import { type FakeTelegram, startFakeTelegram } from "@agent-kernel/fake-telegram";
import { openKernelStore } from "@agent-kernel/kernel";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configText, createHarness, type Harness, REPO_ROOT } from "./harness.ts";
import { type ReadmeCommand, readmeCommands, readmePaths } from "./readme-commands.ts";

interface Ctx {
  readonly h: Harness;
  readonly telegram: FakeTelegram;
  /** The latest run id, for the synopsis instances that need one (`$RUN_ID`). */
  runId: string;
}

type Run = {
  readonly kind: "run";
  readonly code: number;
  /** Where it runs: the repository (tooling/pnpm, git) or the scratch dir (default). */
  readonly cwd?: "repo";
  readonly stdout?: RegExp;
  readonly stderr?: RegExp;
  readonly before?: (ctx: Ctx) => Promise<void> | void;
  /** A daemon: up once its output matches `up`, then stopped with `signal`; `code` is its exit code then. */
  readonly daemon?: {
    readonly up: RegExp;
    readonly signal: "SIGINT" | "SIGTERM";
    readonly codes: readonly number[];
  };
  readonly timeoutMs?: number;
  /** Changes to the environment (undefined removes a variable). */
  readonly env?: (ctx: Ctx) => Readonly<Record<string, string | undefined>>;
};
type Coverage =
  | Run
  | { readonly kind: "synopsis"; readonly instances: readonly string[] }
  | { readonly kind: "environment" }
  | { readonly kind: "elsewhere"; readonly file: string; readonly contains: string };

const ok: Run = { kind: "run", code: 0 };
const install = (name: string): Coverage => ({
  kind: "elsewhere",
  file: "tooling/registry-roundtrip/src/roundtrip.test.ts",
  contains: `"${name}"`,
});
const withJob = (ctx: Ctx) => rmSync(join(ctx.h.stateDir, "cron", "jobs.json"), { force: true });
async function pendingPairing(ctx: Ctx): Promise<void> {
  const store = await openKernelStore({ stateDir: ctx.h.stateDir });
  try {
    const pairing = new PairingStore(store.channelState, { generateCode: () => "K7QX2M9P" });
    await pairing.revoke("telegram", "default", "5550001");
    await pairing.challenge("telegram", "default", { id: "5550001" });
  } finally {
    await store.close();
  }
}
async function mainSession(ctx: Ctx): Promise<void> {
  ctx.h.llm.enqueue(reply("a turn so that the main session exists"));
  expect((await ctx.h.run(["agent", "-m", "hello"])).code).toBe(0);
}

/** Every README command (by its text) and how it is covered. */
const BASE_COVERAGE: Readonly<Record<string, Coverage>> = {
  // README.md
  "tooling/pnpm demo": { kind: "elsewhere", file: ".ci/run", contains: "tooling/pnpm demo" },
  "tooling/pnpm test": { kind: "elsewhere", file: ".ci/run", contains: "tooling/pnpm test" },
  "export ANTHROPIC_API_KEY=sk-ant-...": { kind: "environment" },
  "export AGENT_KERNEL_CONFIG=~/.agent-kernel/config.json5": { kind: "environment" },
  // A reader with no config and no key yet (the export before it is theirs to fill in): the honest auth
  // error, naming the variable to set.
  'tooling/pnpm agent -m "Write a short release plan to plan.md" --model anthropic/claude-sonnet-4-5': {
    kind: "run",
    code: 1,
    env: (ctx) => ({ AGENT_KERNEL_CONFIG: undefined, HOME: join(ctx.h.root, "new-user") }),
    cwd: "repo",
    stderr: /no API key found for provider "anthropic".*ANTHROPIC_API_KEY/,
    timeoutMs: 600_000,
  },
  "tooling/pnpm agent runs list --json": {
    kind: "run",
    code: 0,
    cwd: "repo",
    stdout: /^\[[\s\S]*\]\s*$/,
    timeoutMs: 600_000,
  },
  "agent-kernel setup": ok,
  "agent-kernel doctor": { kind: "run", code: 0, stdout: /No problems/ },
  "agent-kernel doctor --fix": ok,
  "agent-kernel models status": { kind: "run", code: 0, stdout: /^scripted +key: /m },
  "agent-kernel models list --json": ok,
  "agent-kernel channels list": { kind: "run", code: 0, stdout: /^telegram +enabled/m },
  "agent-kernel channels status --probe": { kind: "run", code: 0, stdout: /^telegram +ok, bot @/m },
  "agent-kernel pairing list": ok,
  "agent-kernel pairing approve telegram K7QX2M9P": {
    kind: "run",
    code: 0,
    stdout: /^Approved 5550001/,
    before: pendingPairing,
  },
  'agent-kernel cron add brief --every 3600 -m "Summarise my inbox"': {
    kind: "run",
    code: 0,
    before: withJob,
  },
  "agent-kernel cron disable brief": ok,
  "agent-kernel cron list --json": { kind: "run", code: 0, stdout: /"id": "brief"/ },
  "agent-kernel sessions reset main": {
    kind: "run",
    code: 0,
    stdout: /^Session agent:main:main starts over/,
    before: mainSession,
  },
  "agent-kernel config get agents.defaults.model": { kind: "run", code: 0, stdout: /scripted\/m1/ },
  "agent-kernel config set session.dmScope per-peer": ok,
  'agent-kernel agent -m "What changed in the build?"': ok,
  // apps/agent-kernel/README.md
  "npm install -g @agent-kernel/cli": install("@agent-kernel/cli"),
  "tooling/pnpm agent-kernel --help": {
    kind: "run",
    code: 0,
    cwd: "repo",
    stdout: /^Usage: agent-kernel /m,
    timeoutMs: 600_000,
  },
  "tooling/pnpm exec agent-kernel --version": {
    kind: "run",
    code: 0,
    cwd: "repo",
    stdout: /^\d+\.\d+\.\d+$/m,
    timeoutMs: 300_000,
  },
  // apps/agent/README.md
  "npm install -g @agent-kernel/agent": install("@agent-kernel/agent"),
  'agent -m "What changed in the build?"': ok,
  'agent -m "hi" --agent ops --to +15550001 --json': {
    kind: "run",
    code: 0,
    stdout: /"agent:ops:/,
  },
  'agent -m "what is this?" --image photo.png': {
    kind: "run",
    code: 0,
    // A real 1×1 PNG in the scratch dir the command runs in (its type is judged by its first bytes).
    before: (ctx) =>
      writeFileSync(
        join(ctx.h.root, "photo.png"),
        Buffer.from(
          "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
          "base64",
        ),
      ),
  },
  'agent -m "think hard" --thinking high': ok,
  'agent -m "once" --thinking-once low --model sonnet --timeout 120 --verbose': {
    kind: "run",
    code: 0,
    stderr: /\[agent\] attempt 1: scripted\/m2/,
  },
  "git log -1 | agent -m -": { kind: "run", code: 0, cwd: "repo" },
  "agent --version": { kind: "run", code: 0, stdout: /^\d+\.\d+\.\d+$/m },
  "agent sessions list | agent sessions show <key|sessionId>": {
    kind: "synopsis",
    instances: ["agent sessions list", "agent sessions show agent:main:main"],
  },
  "agent runs list [--session-key k] | agent runs show <runId>": {
    kind: "synopsis",
    instances: ["agent runs list --session-key main", 'agent runs show "$RUN_ID"'],
  },
  "agent runs show <runId> --prompt [--json]": {
    kind: "synopsis",
    instances: ['agent runs show "$RUN_ID" --prompt', 'agent runs show "$RUN_ID" --prompt --json'],
  },
  'agent runs show "$RUN_ID" --prompt': { kind: "run", code: 0, stdout: /## Tooling/ },
  'agent runs show "$RUN_ID" --prompt --json': { kind: "run", code: 0, stdout: /"hash": "[0-9a-f]{64}"/ },
  "agent skills list [--agent id] [--json]": {
    kind: "synopsis",
    instances: ["agent skills list --agent main", "agent skills list --json"],
  },
  "agent skills list --agent main": ok,
  "agent skills list --json": { kind: "run", code: 0, stdout: /"skills"/ },
  "agent replay <runId>": { kind: "synopsis", instances: ['agent replay "$RUN_ID"'] },
  "agent doctor [legacy.jsonl | openclaw-agent-dir/ ...]": { kind: "synopsis", instances: ["agent doctor"] },
  "agent sessions list": ok,
  "agent sessions show agent:main:main": ok,
  "agent runs list --session-key main": ok,
  'agent runs show "$RUN_ID"': ok,
  'agent replay "$RUN_ID"': ok,
  "agent doctor": ok,
  // apps/auto-reply/README.md
  "npm install -g @agent-kernel/auto-reply": install("@agent-kernel/auto-reply"),
  "auto-reply --config ~/.agent-kernel/config.json5 --state-dir ~/.agent-kernel": {
    kind: "run",
    code: 130,
    daemon: { up: /listening on webchat/, signal: "SIGINT", codes: [0, 130] },
  },
  // apps/cron/README.md
  "npm install -g @agent-kernel/cron": install("@agent-kernel/cron"),
  "agent-cron list": { kind: "run", code: 0, stdout: /^digest /m },
  "agent-cron history digest [--json]": {
    kind: "synopsis",
    instances: ["agent-cron history digest", "agent-cron history digest --json"],
  },
  "agent-cron history digest": ok,
  "agent-cron history digest --json": ok,
  "agent-cron run digest": ok,
  "agent-cron tick": ok,
  "agent-cron start": {
    kind: "run",
    code: 130,
    daemon: { up: /started: \d+ job/, signal: "SIGINT", codes: [0, 130] },
  },
  // apps/followup/README.md
  "npm install -g @agent-kernel/followup": install("@agent-kernel/followup"),
  'followup enqueue -m "text" [--session work] [--agent id] [--id key] [--mode collect] [--channel slack --to C1 --thread T --sender U1] [--json]':
    { kind: "synopsis", instances: ['followup enqueue -m "text" --session work --mode collect --json'] },
  'followup enqueue -m "text" --session work --mode collect --json': ok,
  "followup run [--json]": { kind: "synopsis", instances: ["followup run --json"] },
  "followup run --json": ok,
  "followup list [--session work] [--status pending|claimed|done|failed] [--json]": {
    kind: "synopsis",
    instances: ["followup list --session work --status done --json"],
  },
  "followup list --session work --status done --json": { kind: "run", code: 0, stdout: /"status": "done"/ },
  // apps/hybrid-planner/README.md
  "npm install -g @agent-kernel/hybrid-planner": install("@agent-kernel/hybrid-planner"),
  'hybrid-planner -m "Summarise my notes" [--agent id] [--plan-id id] [--max-steps n] [--json] [--config f] [--state-dir d]':
    {
      kind: "synopsis",
      instances: ['hybrid-planner -m "Summarise my notes"'],
    },
  'hybrid-planner -m "Summarise my notes"': {
    kind: "run",
    code: 0,
    stdout: /^\[read\] notes summarised$/m,
    before: (ctx) => {
      const plan = { steps: [{ id: "read", prompt: "summarise the notes" }] };
      ctx.h.llm.enqueue(reply(`<final>${JSON.stringify(plan)}</final>`), reply("notes summarised"));
    },
  },
};

/**
 * The gateway app's README (apps/gateway, written beside this package): its commands count only while that
 * README exists, so a checkout without the app is not failed for commands nobody shows.
 */
const GATEWAY_COVERAGE: Readonly<Record<string, Coverage>> = {
  "npm install -g @agent-kernel/gateway": install("@agent-kernel/gateway"),
  "agent-kernel-gateway --config ./config.json5 --state-dir ./state": {
    kind: "run",
    code: 143,
    daemon: { up: /channel webchat:default started/, signal: "SIGTERM", codes: [143] },
  },
  // after the daemon stopped: says so, exit 1 (documented "not running")
  "agent-kernel-gateway status --config ./config.json5 --state-dir ./state": { kind: "run", code: 1 },
  "agent-kernel-gateway logs --json --config ./config.json5 --state-dir ./state": {
    kind: "run",
    code: 0,
    stdout: /"msg"/,
  },
};

/** The commands the READMEs show without a path, each its app's own entry, from source. */
const COMMANDS_ON_PATH: Readonly<Record<string, string>> = {
  agent: "apps/agent/src/main.ts",
  "agent-cron": "apps/cron/src/main.ts",
  followup: "apps/followup/src/main.ts",
  "hybrid-planner": "apps/hybrid-planner/src/main.ts",
  "auto-reply": "apps/auto-reply/src/main.ts",
  "agent-kernel": "apps/agent-kernel/src/main.ts",
  "agent-kernel-gateway": "apps/gateway/src/main.ts",
};

const COVERAGE: Readonly<Record<string, Coverage>> = {
  ...BASE_COVERAGE,
  ...(existsSync(join(REPO_ROOT, "apps", "gateway", "README.md")) ? GATEWAY_COVERAGE : {}),
};

const all: ReadmeCommand[] = readmePaths(REPO_ROOT).flatMap((readme) => readmeCommands(REPO_ROOT, readme));

let ctx: Ctx;
let binDir: string;
beforeAll(async () => {
  const telegram = await startFakeTelegram();
  const h = await createHarness(
    `channels: { telegram: { enabled: true, botToken: ${JSON.stringify(telegram.token)}, apiBaseUrl: ${JSON.stringify(telegram.url)}, dmPolicy: "pairing" } },`,
  );
  // Every model request that nothing else scripted gets this answer.
  h.llm.setScenario({ fallback: reply("scripted answer") });
  ctx = { h, telegram, runId: "" };
  binDir = join(h.root, "bin");
  mkdirSync(binDir);
  for (const [name, entry] of Object.entries(COMMANDS_ON_PATH)) {
    const script = join(binDir, name);
    writeFileSync(
      script,
      `#!/bin/sh\nexec "${process.execPath}" --conditions=@agent-kernel/source "${join(REPO_ROOT, entry)}" "$@"\n`,
    );
    chmodSync(script, 0o755);
  }
  // The daemons' configs: the web chat on a free port (auto-reply reads ~/.agent-kernel, the gateway ./).
  const daemonConfig = configText(
    h.llm.baseUrlFor("openai"),
    h.workspaceDir,
    "channels: { webchat: { enabled: true, port: 0 } },",
  );
  mkdirSync(join(h.home, ".agent-kernel"), { recursive: true });
  writeFileSync(join(h.home, ".agent-kernel", "config.json5"), daemonConfig, { mode: 0o600 });
  writeFileSync(join(h.root, "config.json5.daemon"), daemonConfig, { mode: 0o600 });
}, 120_000);
afterAll(async () => {
  await ctx?.h.close();
  await ctx?.telegram.close();
});

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

async function runCommand(command: string, spec: Run): Promise<Outcome> {
  const cwd = spec.cwd === "repo" ? REPO_ROOT : ctx.h.root;
  if (command.includes("./config.json5")) {
    // the gateway's README runs it beside its config
    writeFileSync(join(ctx.h.root, "config.json5"), readFileSync(join(ctx.h.root, "config.json5.daemon")), {
      mode: 0o600,
    });
  }
  const env: Record<string, string | undefined> = {
    ...ctx.h.env,
    PATH: `${binDir}:${process.env.PATH}`,
    RUN_ID: ctx.runId,
    ...spec.env?.(ctx),
  };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  const child = spawn("sh", ["-c", spec.daemon ? `exec ${command}` : command], {
    cwd,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) =>
    child.once("close", (code, signal) =>
      resolve(code ?? (signal === "SIGINT" ? 130 : signal === "SIGTERM" ? 143 : null)),
    ),
  );
  if (spec.daemon !== undefined) {
    const daemon = spec.daemon;
    const deadline = Date.now() + 90_000;
    let done = false;
    void exited.then(() => (done = true));
    while (!daemon.up.test(stdout + stderr) && !done && Date.now() < deadline) await sleep(100);
    expect(done, `${command} exited before it was up:\n${stdout}${stderr}`).toBe(false);
    expect(stdout + stderr, `${command} never said it was up`).toMatch(daemon.up);
    await sleep(1_000);
    expect(done, `${command} stopped by itself:\n${stdout}${stderr}`).toBe(false);
    process.kill(-(child.pid as number), daemon.signal);
  }
  return { code: await exited, stdout, stderr };
}

describe("every command the READMEs show", () => {
  it("is in the checked list, and every entry of the list is still shown by a README", () => {
    const shown = new Set(all.map((command) => command.command));
    const missing = all
      .filter((command) => COVERAGE[command.command] === undefined)
      .map((c) => `${c.readme}:${c.line}: ${c.command}`);
    expect(missing, "README commands no test covers: add each to COVERAGE").toEqual([]);
    const instances = new Set(
      Object.values(COVERAGE).flatMap((coverage) => (coverage.kind === "synopsis" ? coverage.instances : [])),
    );
    const stale = Object.keys(COVERAGE).filter((command) => !shown.has(command) && !instances.has(command));
    expect(stale, "COVERAGE entries no README shows any more").toEqual([]);
  });

  it("synopses have placeholders and their instances are run; environment lines are exports", () => {
    for (const [command, coverage] of Object.entries(COVERAGE)) {
      if (coverage.kind === "synopsis") {
        expect(command, "a synopsis shows placeholders").toMatch(/<[^>]+>|\[[^\]]+\]/);
        for (const instance of coverage.instances) expect(COVERAGE[instance]?.kind, instance).toBe("run");
      }
      if (coverage.kind === "environment") expect(command).toMatch(/^export [A-Z_]+=/);
    }
  });

  it("the commands run elsewhere are in those files exactly", () => {
    for (const [command, coverage] of Object.entries(COVERAGE)) {
      if (coverage.kind !== "elsewhere") continue;
      expect(existsSync(join(REPO_ROOT, coverage.file)), coverage.file).toBe(true);
      expect(
        readFileSync(join(REPO_ROOT, coverage.file), "utf8"),
        `${command} in ${coverage.file}`,
      ).toContain(coverage.contains);
    }
  });

  describe.each(readmePaths(REPO_ROOT))("%s", (readme) => {
    const commands = all.filter((command) => command.readme === readme);
    const toRun = commands.flatMap((command) => {
      const coverage = COVERAGE[command.command];
      if (coverage?.kind === "run") return [command.command];
      if (coverage?.kind === "synopsis") return [...coverage.instances];
      return [];
    });
    it.skipIf(toRun.length === 0)(
      "runs exactly as written",
      async () => {
        for (const command of toRun) {
          const spec = COVERAGE[command] as Run;
          await spec.before?.(ctx);
          const outcome = await runCommand(command, spec);
          const shown = `${readme}: ${command}\n--- stdout\n${outcome.stdout}\n--- stderr\n${outcome.stderr}`;
          if (spec.daemon) expect(spec.daemon.codes, shown).toContain(outcome.code);
          else expect(outcome.code, shown).toBe(spec.code);
          if (spec.stdout) expect(outcome.stdout, shown).toMatch(spec.stdout);
          if (spec.stderr) expect(outcome.stderr, shown).toMatch(spec.stderr);
          const latest = JSON.parse(
            (await ctx.h.run(["agent", "runs", "list", "--json", "--limit", "1"])).stdout || "[]",
          );
          if (latest[0]?.runId) ctx.runId = latest[0].runId;
        }
      },
      1_500_000,
    );
  });
});

// One scenario × app cell's scratch environment: its own directory (workspace, state dir, config file), its
// own API keys, and the scripted model's rules registered on the shared fake-llm server under those keys, so
// every cell can run at once on one server without taking another cell's answers. Owns the base config every
// app gets and the key scheme. Does not own running an app (apps/*.ts) or reading the outcome (kernel-outcome.ts).
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type KernelConfig, parseConfig } from "@agent-kernel/config";
import type { FakeLlm } from "@agent-kernel/fake-llm";
import type { ParityScenario } from "./types.ts";

export interface Cell {
  readonly scenario: ParityScenario;
  readonly app: string;
  /** Unique per cell; every API key of the cell ends with `-<id>-profile-<name>`. */
  readonly id: string;
  readonly root: string;
  readonly stateDir: string;
  readonly workspaceDir: string;
  readonly configPath: string;
  /** The parsed config (what in-process apps take). */
  readonly config: KernelConfig;
  readonly llm: FakeLlm;
  /** Model requests this cell made so far. */
  requests(): number;
}

const PROVIDER = "scripted";
export const SENDER_ID = "user-1";
export const TEST_CHANNEL = "test";

function keyOf(cellId: string, profile: string): string {
  return `sk-parity-${cellId}-profile-${profile}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Plain objects merge key by key; anything else in `over` replaces. */
export function deepMerge(
  base: Record<string, unknown>,
  over: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] = isPlainObject(current) && isPlainObject(value) ? deepMerge(current, value) : value;
  }
  return out;
}

/** The config every app of a scenario runs with (raw, before parsing). */
export function rawConfigFor(
  scenario: ParityScenario,
  cellId: string,
  baseUrl: string,
  dirs: { readonly workspaceDir: string; readonly stateDir: string },
) {
  const { workspaceDir, stateDir } = dirs;
  const profiles = scenario.profiles ?? [];
  const base: Record<string, unknown> = {
    models: {
      providers: {
        [PROVIDER]: {
          baseUrl,
          api: "openai-completions",
          apiKey: keyOf(cellId, "main"),
          models: [
            { id: "m1", reasoning: true, contextWindow: 32000, maxTokens: 4096 },
            { id: "m2", contextWindow: 16000, maxTokens: 4096 },
          ],
        },
      },
    },
    agents: {
      defaults: { model: `${PROVIDER}/m1`, workspace: workspaceDir },
      list: [{ id: "main", default: true }],
    },
    tools: { profile: "coding" },
    // Written into the config as the `agent` command does, so every app resolves the same agent dir.
    store: { stateDir },
    // The channel the auto-reply cell talks through: the test sender is the owner, as the CLI's user is.
    channels: { [TEST_CHANNEL]: { dmPolicy: "allowlist", allowFrom: [SENDER_ID] } },
    ...(profiles.length === 0
      ? {}
      : {
          auth: {
            profiles: Object.fromEntries(
              profiles.map((name) => [
                `${PROVIDER}:${name}`,
                { provider: PROVIDER, mode: "api_key", apiKey: keyOf(cellId, name) },
              ]),
            ),
            order: { [PROVIDER]: profiles.map((name) => `${PROVIDER}:${name}`) },
          },
        }),
  };
  return deepMerge(base, scenario.config ?? {});
}

export function prepareCell(options: {
  readonly scenario: ParityScenario;
  readonly app: string;
  readonly index: number;
  readonly baseDir: string;
  readonly llm: FakeLlm;
}): Cell {
  const { scenario, app, llm } = options;
  const id = `c${options.index}`;
  const root = join(options.baseDir, `${scenario.name}--${app}`);
  const stateDir = join(root, "state");
  const workspaceDir = join(root, "workspace");
  mkdirSync(stateDir, { recursive: true });
  mkdirSync(workspaceDir, { recursive: true });
  for (const [file, text] of Object.entries(scenario.workspace ?? {})) {
    const path = join(workspaceDir, file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }
  const raw = rawConfigFor(scenario, id, llm.baseUrlFor("openai"), { workspaceDir, stateDir });
  const configPath = join(root, "config.json");
  writeFileSync(configPath, `${JSON.stringify(raw, null, 2)}\n`);
  const config = parseConfig(raw, { sourceName: configPath });
  const ruleName = (profile: string) => `${scenario.name}--${app}--${profile}`;
  for (const rule of scenario.model) {
    const profile = rule.profile ?? "main";
    llm.addRule({
      name: ruleName(profile),
      when: {
        apiKeySuffix: `-${id}-profile-${profile}`,
        ...(rule.model === undefined ? {} : { model: rule.model }),
      },
      steps: [...rule.steps],
    });
  }
  return {
    scenario,
    app,
    id,
    root,
    stateDir,
    workspaceDir,
    configPath,
    config,
    llm,
    requests() {
      const prefix = `${scenario.name}--${app}--`;
      return llm.requests.filter((request) => request.rule?.startsWith(prefix) === true).length;
    },
  };
}

// The whole config file as one zod schema. Owns: the root sections, the
// checks that span sections (unique ids, known agent references) and the
// exported types. Every default comes from defaults.ts.
import { z } from "zod";
import {
  AUTH_COOLDOWN_DEFAULTS,
  CRON_DEFAULTS,
  CRON_JOB_DEFAULTS,
  QUEUE_DEFAULTS,
  SESSION_DEFAULTS,
  STORE_DEFAULTS,
} from "./defaults.ts";
import { agentsConfig } from "./schema-agents.ts";
import { binding, channelsConfig, KNOWN_CHANNELS } from "./schema-channels.ts";
import { PROVIDER_APIS, QUEUE_MODES } from "./schema-constants.ts";
import {
  agentId,
  modelSelection,
  nonEmptyString,
  nonNegativeInt,
  positiveInt,
  thinkingLevel,
} from "./schema-primitives.ts";
import { skillsConfig } from "./schema-skills.ts";
import { toolsConfig } from "./schema-tools.ts";
import { closestMatch } from "./suggest.ts";

export { PROVIDER_APIS, QUEUE_MODES };

const queueMode = z.enum(QUEUE_MODES);

const sessionConfig = z.strictObject({
  scope: z.enum(["per-sender", "global"]).default(SESSION_DEFAULTS.scope),
  dmScope: z
    .enum(["main", "per-peer", "per-channel-peer", "per-account-channel-peer"])
    .default(SESSION_DEFAULTS.dmScope)
    .describe('How DMs map to sessions; "main" collapses every DM into the main session.'),
  groupScope: z
    .enum(["main", "per-group"])
    .default(SESSION_DEFAULTS.groupScope)
    .describe('How groups map to sessions; "main" collapses every group into the main session.'),
  mainKey: nonEmptyString
    .regex(/^[^:\s]+$/, { error: 'expected a key without ":" or spaces' })
    .transform((key) => key.toLowerCase())
    .default(SESSION_DEFAULTS.mainKey),
  identityLinks: z
    .record(nonEmptyString, z.array(nonEmptyString))
    .optional()
    .describe('Canonical name → peer ids ("telegram:123") that are the same person.'),
  reset: z
    .strictObject({
      mode: z.enum(["daily", "idle", "off"]).default(SESSION_DEFAULTS.reset.mode),
      atHour: z.number().int().min(0).max(23).default(SESSION_DEFAULTS.reset.atHour),
      idleMinutes: positiveInt.optional(),
    })
    .prefault({}),
});

const queueConfig = z.strictObject({
  mode: queueMode.default(QUEUE_DEFAULTS.mode),
  byChannel: z.record(nonEmptyString, queueMode).optional(),
  debounceMs: nonNegativeInt.default(QUEUE_DEFAULTS.debounceMs),
  debounceMsByChannel: z.record(nonEmptyString, nonNegativeInt).optional(),
  cap: positiveInt.default(QUEUE_DEFAULTS.cap),
  drop: z.enum(["summarize", "old", "new"]).default(QUEUE_DEFAULTS.drop),
});

const authProfile = z.strictObject({
  provider: nonEmptyString.transform((p) => p.toLowerCase()),
  mode: z.enum(["api_key", "oauth", "token"]),
  apiKey: nonEmptyString.optional(),
  token: nonEmptyString.optional(),
  email: nonEmptyString.optional(),
});

const authConfig = z.strictObject({
  profiles: z
    .record(nonEmptyString, authProfile)
    .default({})
    .describe('Profiles by id ("anthropic:work"). Keep secrets in ${ENV} references.'),
  order: z
    .record(nonEmptyString, z.array(nonEmptyString))
    .default({})
    .describe("Per provider, the profile ids in the order to try them."),
  cooldowns: z
    .strictObject({
      transientSeconds: z
        .array(positiveInt)
        .min(1)
        .default([...AUTH_COOLDOWN_DEFAULTS.transientSeconds]),
      rateLimitBaseSeconds: positiveInt.default(AUTH_COOLDOWN_DEFAULTS.rateLimitBaseSeconds),
      rateLimitMaxHours: positiveInt.default(AUTH_COOLDOWN_DEFAULTS.rateLimitMaxHours),
      billingBaseMinutes: positiveInt.default(AUTH_COOLDOWN_DEFAULTS.billingBaseMinutes),
      billingMaxHours: positiveInt.default(AUTH_COOLDOWN_DEFAULTS.billingMaxHours),
      authPermanentBaseMinutes: positiveInt.default(AUTH_COOLDOWN_DEFAULTS.authPermanentBaseMinutes),
      authPermanentMaxHours: positiveInt.default(AUTH_COOLDOWN_DEFAULTS.authPermanentMaxHours),
      failureWindowHours: positiveInt.default(AUTH_COOLDOWN_DEFAULTS.failureWindowHours),
    })
    .prefault({}),
});

const customModel = z.strictObject({
  id: nonEmptyString,
  name: nonEmptyString.optional(),
  reasoning: z.boolean().optional(),
  input: z.array(z.enum(["text", "image"])).optional(),
  contextWindow: positiveInt.optional(),
  maxTokens: positiveInt.optional(),
});

const modelsConfig = z.strictObject({
  providers: z
    .record(
      nonEmptyString,
      z.strictObject({
        baseUrl: z.url({
          protocol: /^https?$/,
          error: 'expected an http(s) URL like "http://127.0.0.1:8080/v1"',
        }),
        api: z.enum(PROVIDER_APIS),
        apiKey: nonEmptyString.optional(),
        headers: z.record(nonEmptyString, z.string()).optional(),
        models: z.array(customModel).min(1, { error: "expected at least one model" }),
      }),
    )
    .default({})
    .describe("Custom providers (OpenAI- or Anthropic-compatible servers) by id."),
});

const storeConfig = z.strictObject({
  stateDir: nonEmptyString.optional().describe("Default $AGENT_KERNEL_STATE_DIR, else ~/.agent-kernel."),
  driver: z.enum(["sqlite", "postgres"]).default(STORE_DEFAULTS.driver),
  postgres: z
    .strictObject({
      url: nonEmptyString
        .regex(/^postgres(ql)?:\/\//, { error: 'expected a URL starting with "postgres://"' })
        .describe("Use ${DATABASE_URL}."),
      maxConnections: positiveInt.optional(),
    })
    .optional(),
});

const cronSchedule = z.discriminatedUnion(
  "kind",
  [
    z.strictObject({
      kind: z.literal("cron"),
      expr: nonEmptyString.regex(/^\S+(\s+\S+){4,5}$/, {
        error: 'expected a cron expression with 5 or 6 fields, like "0 9 * * 1-5"',
      }),
      tz: nonEmptyString.optional().describe('An IANA time zone, like "Europe/Berlin".'),
    }),
    z.strictObject({ kind: z.literal("every"), everySeconds: positiveInt }),
    z.strictObject({ kind: z.literal("at"), at: z.iso.datetime({ offset: true }) }),
  ],
  { error: 'expected a schedule with kind "cron", "every" or "at"' },
);

const cronJob = z.strictObject({
  id: nonEmptyString.regex(/^[a-z0-9][a-z0-9_-]*$/i, {
    error: 'expected a job id (letters, digits, "_" or "-")',
  }),
  name: nonEmptyString.optional(),
  agentId: agentId.optional(),
  enabled: z.boolean().default(CRON_JOB_DEFAULTS.enabled),
  schedule: cronSchedule,
  payload: z.strictObject({
    message: nonEmptyString,
    model: modelSelection.optional(),
    thinking: thinkingLevel.optional(),
    timeoutSeconds: positiveInt.optional(),
  }),
  delivery: z
    .strictObject({
      mode: z.enum(["announce", "none"]).default(CRON_JOB_DEFAULTS.deliveryMode),
      channel: nonEmptyString.optional(),
      to: nonEmptyString.optional(),
    })
    .optional(),
  missedRuns: z
    .enum(["skip", "run-once"])
    .default(CRON_JOB_DEFAULTS.missedRuns)
    .describe("After downtime: skip missed runs, or run once to catch up."),
});

export const configSchema = z
  .strictObject({
    $schema: z.string().optional(),
    agents: agentsConfig.prefault({}),
    tools: toolsConfig.prefault({}),
    auth: authConfig.prefault({}),
    models: modelsConfig.prefault({}),
    session: sessionConfig.prefault({}),
    messages: z.strictObject({ queue: queueConfig.prefault({}) }).prefault({}),
    channels: channelsConfig.default({}),
    bindings: z.array(binding).default([]),
    cron: z
      .strictObject({
        enabled: z.boolean().default(CRON_DEFAULTS.enabled),
        maxConcurrentRuns: positiveInt.default(CRON_DEFAULTS.maxConcurrentRuns),
        jobs: z.array(cronJob).default([]),
      })
      .prefault({}),
    store: storeConfig.prefault({}),
    skills: skillsConfig.prefault({}),
  })
  .superRefine((config, ctx) => {
    const agentIndex = new Map<string, number>();
    config.agents.list.forEach((agent, index) => {
      const first = agentIndex.get(agent.id);
      if (first !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["agents", "list", index, "id"],
          message: `duplicate agent id "${agent.id}" (also agents.list[${first}].id)`,
        });
      } else agentIndex.set(agent.id, index);
    });
    const defaults = config.agents.list.flatMap((agent, index) => (agent.default ? [index] : []));
    for (const index of defaults.slice(1)) {
      ctx.addIssue({
        code: "custom",
        path: ["agents", "list", index, "default"],
        message: `only one agent may be the default (also agents.list[${defaults[0]}])`,
      });
    }
    const knownAgents = agentIndex.size > 0 ? [...agentIndex.keys()] : ["main"];
    const checkAgentRef = (id: string | undefined, path: (string | number)[]) => {
      if (id === undefined || knownAgents.includes(id)) return;
      const suggestion = closestMatch(id, knownAgents);
      ctx.addIssue({
        code: "custom",
        path,
        message: `unknown agent "${id}"${suggestion ? `; did you mean "${suggestion}"?` : ""} (agents: ${knownAgents.join(", ")})`,
      });
    };
    config.bindings.forEach((b, index) => {
      checkAgentRef(b.agentId, ["bindings", index, "agentId"]);
    });
    const jobIndex = new Map<string, number>();
    config.cron.jobs.forEach((job, index) => {
      checkAgentRef(job.agentId, ["cron", "jobs", index, "agentId"]);
      const first = jobIndex.get(job.id);
      if (first !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["cron", "jobs", index, "id"],
          message: `duplicate cron job id "${job.id}" (also cron.jobs[${first}].id)`,
        });
      } else jobIndex.set(job.id, index);
    });

    const checkChunk = (
      chunk: { minChars?: number | undefined; maxChars?: number | undefined } | undefined,
      path: (string | number)[],
    ) => {
      if (chunk?.minChars !== undefined && chunk.maxChars !== undefined && chunk.minChars > chunk.maxChars) {
        ctx.addIssue({
          code: "custom",
          path: [...path, "blockStreamingChunk", "minChars"],
          message: `expected minChars <= maxChars, found minChars ${chunk.minChars} > maxChars ${chunk.maxChars}`,
        });
      }
    };
    checkChunk(config.agents.defaults.blockStreamingChunk, ["agents", "defaults"]);
    config.agents.list.forEach((agent, index) => {
      checkChunk(agent.blockStreamingChunk, ["agents", "list", index]);
    });

    const aliasOwner = new Map<string, string>();
    const modelMaps: [(string | number)[], Record<string, { alias?: string | undefined }> | undefined][] = [
      [["agents", "defaults", "models"], config.agents.defaults.models],
      ...config.agents.list.map((agent, index): [(string | number)[], typeof agent.models] => [
        ["agents", "list", index, "models"],
        agent.models,
      ]),
    ];
    for (const [path, models] of modelMaps) {
      aliasOwner.clear();
      for (const [ref, entry] of Object.entries(models ?? {})) {
        if (entry.alias === undefined) continue;
        const alias = entry.alias.toLowerCase();
        const owner = aliasOwner.get(alias);
        if (owner !== undefined) {
          ctx.addIssue({
            code: "custom",
            path: [...path, ref, "alias"],
            message: `alias "${entry.alias}" is already used by "${owner}"`,
          });
        } else aliasOwner.set(alias, ref);
      }
    }

    for (const [provider, ids] of Object.entries(config.auth.order)) {
      ids.forEach((id, index) => {
        const profile = config.auth.profiles[id];
        if (profile && profile.provider !== provider.toLowerCase()) {
          ctx.addIssue({
            code: "custom",
            path: ["auth", "order", provider, index],
            message: `profile "${id}" belongs to provider "${profile.provider}", not "${provider}"`,
          });
        }
      });
    }

    for (const id of Object.keys(config.channels)) {
      const known = (KNOWN_CHANNELS as readonly string[]).includes(id);
      if (known) continue;
      if (!/^[a-z][a-z0-9_-]*$/.test(id)) {
        ctx.addIssue({
          code: "custom",
          path: ["channels", id],
          message: 'expected a channel id of lower-case letters, digits, "_" or "-"',
        });
        continue;
      }
      const suggestion = closestMatch(id, KNOWN_CHANNELS);
      if (suggestion) {
        ctx.addIssue({
          code: "custom",
          path: ["channels", id],
          message: `unknown channel "${id}"; did you mean "${suggestion}"?`,
        });
      }
    }
  });

/** The config as written (every field optional where a default exists). */
export type KernelConfigInput = z.input<typeof configSchema>;
/** The config after validation, with every default filled in. */
export type KernelConfig = z.output<typeof configSchema>;

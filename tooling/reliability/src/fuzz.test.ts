// Bad-input fuzzing (fast-check) of every parser that takes outside input: the config (JSON5 text and
// objects), session keys, model refs, kernel inputs, reply directives and reasoning tags, and the legacy
// import files. The property everywhere: no crash — a valid result, or the package's own error class with a
// message naming what is wrong — and bad input never loses stored data.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, type KernelConfig, parseConfig, parseConfigText } from "@agent-kernel/config";
import { KernelInputError, validateSessionInput, validateTurnInput } from "@agent-kernel/kernel";
import {
  classifySessionKeyShape,
  normalizeSessionKey,
  parseAgentSessionKey,
  parseModelRef,
  resolveModelRefFromString,
  resolveSessionIdentity,
  SessionIdentityError,
  splitTrailingAuthProfile,
} from "@agent-kernel/runtime-resolver";
import {
  importOpenClawSessions,
  importPiSessionFile,
  openSessionStore,
  parseOpenClawSessionIndex,
  parsePiSessionText,
} from "@agent-kernel/session-store";
import {
  parseInlineDirectives,
  parseReplyDirectives,
  ReasoningStreamStripper,
  StreamingDirectiveAccumulator,
  stripReasoningTagsFromText,
} from "@agent-kernel/turn-pipeline";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { clearErrorOrResult } from "./support/expect-clear.ts";
import { countInputs } from "./support/summary.ts";
import { treeProblems } from "./support/transcript-checks.ts";

const inputs = countInputs("bad-input fuzzing");

const RUNS = 300;
const baseConfig: KernelConfig = parseConfig({}, { env: {} });

/** JSON5-ish text: fragments of real config syntax mixed with noise. */
const configTextArbitrary = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.json().map((json) => json),
  fc
    .array(
      fc.constantFrom(
        "{",
        "}",
        "[",
        "]",
        ":",
        ",",
        "agents",
        "defaults",
        "model",
        '"openai/gpt-5"',
        "tools",
        "profile",
        '"coding"',
        "allow",
        "deny",
        "store",
        "stateDir",
        "${HOME}",
        "${MISSING_VAR}",
        "// comment\n",
        "/*",
        "*/",
        "'single'",
        "0x1F",
        "Infinity",
        "NaN",
        "null",
        "true",
        "__proto__",
        "constructor",
        "\\u0000",
        '"\\ud800"',
      ),
      { maxLength: 40 },
    )
    .map((parts) => parts.join(" ")),
);

/** Objects shaped like a config at the top two levels, with anything below. */
const KEYS = [
  "agents",
  "models",
  "tools",
  "auth",
  "store",
  "session",
  "channels",
  "bindings",
  "messages",
  "cron",
];
const configObjectArbitrary = fc.oneof(
  fc.anything(),
  fc.dictionary(
    fc.constantFrom(...KEYS, "unknownKey"),
    fc.oneof(
      fc.anything(),
      fc.dictionary(
        fc.constantFrom(
          "defaults",
          "list",
          "profile",
          "allow",
          "deny",
          "providers",
          "stateDir",
          "profiles",
          "model",
        ),
        fc.anything(),
      ),
    ),
  ),
);

describe("config", () => {
  it("parseConfigText: a config or a ConfigError naming the line or path", () => {
    fc.assert(
      fc.property(configTextArbitrary, (text) => {
        const config = clearErrorOrResult(
          () => parseConfigText(text, { env: { HOME: "/home/fuzz" }, sourceName: "fuzz.json5" }),
          [ConfigError],
          (message) => message.includes("fuzz.json5"),
        );
        if (config !== undefined) expect(config.agents.defaults).toBeTypeOf("object");
      }),
      { numRuns: inputs(RUNS) },
    );
  });

  it("parseConfig: a config or a ConfigError with at least one issue", () => {
    fc.assert(
      fc.property(configObjectArbitrary, (input) => {
        try {
          const config = parseConfig(input, { env: {} });
          expect(config.tools).toBeTypeOf("object");
        } catch (error) {
          if (!(error instanceof ConfigError)) throw error;
          expect(error.issues.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: inputs(RUNS) },
    );
  });

  it("an unset ${VAR} is reported with its name", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Z][A-Z0-9_]{0,12}$/), (name) => {
        const text = `{ auth: { profiles: { "openai:a": { provider: "openai", mode: "api_key", apiKey: "\${${name}}" } } } }`;
        clearErrorOrResult(
          () => parseConfigText(text, { env: {} }),
          [ConfigError],
          (message) => message.includes(name),
        );
      }),
      { numRuns: inputs(50) },
    );
  });
});

/** Session-key-like strings: real prefixes and separators with noise. */
const sessionKeyArbitrary = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc
    .array(
      fc.oneof(
        fc.constantFrom(
          "agent",
          "main",
          "cron",
          "hook",
          "subagent",
          "acp",
          "telegram",
          "direct",
          "group",
          "thread",
          "",
        ),
        fc.string({ maxLength: 8 }),
      ),
      { maxLength: 7 },
    )
    .map((parts) => parts.join(":")),
);

describe("session keys", () => {
  it("the pure helpers never throw", () => {
    fc.assert(
      fc.property(sessionKeyArbitrary, (key) => {
        expect(normalizeSessionKey(key)).toBeTypeOf("string");
        const parsed = parseAgentSessionKey(key);
        if (parsed !== null) expect(parsed.agentId.length).toBeGreaterThan(0);
        expect(classifySessionKeyShape(key)).toBeTypeOf("string");
      }),
      { numRuns: inputs(RUNS) },
    );
  });

  it("resolveSessionIdentity: an agent-scoped identity or a SessionIdentityError quoting the key", () => {
    fc.assert(
      fc.property(sessionKeyArbitrary, (sessionKey) => {
        const identity = clearErrorOrResult(
          () =>
            resolveSessionIdentity(
              baseConfig,
              { sessionKey },
              { env: {}, homeDir: "/home/fuzz", cwd: "/work" },
            ),
          [SessionIdentityError],
        );
        if (identity !== undefined) {
          expect(identity.sessionKey.startsWith("agent:"), identity.sessionKey).toBe(true);
          expect(identity.agentId.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: inputs(RUNS) },
    );
  });
});

const modelRefArbitrary = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc
    .tuple(
      fc.constantFrom("openai", "anthropic", "OpenAI", " google ", "", "x"),
      fc.constantFrom("/", "//", "", "@", " / "),
      fc.string({ maxLength: 20 }),
      fc.constantFrom("", "@profile", "@", "@@x", "/extra"),
    )
    .map((parts) => parts.join("")),
);

describe("model refs", () => {
  it("parseModelRef and resolveModelRefFromString: null or a ref with a provider and a model", () => {
    fc.assert(
      fc.property(modelRefArbitrary, (raw) => {
        const ref = parseModelRef(raw, "openai");
        if (ref !== null) {
          expect(ref.provider.length).toBeGreaterThan(0);
          expect(ref.model.length).toBeGreaterThan(0);
        }
        expect(splitTrailingAuthProfile(raw).model).toBeTypeOf("string");
        const resolved = resolveModelRefFromString({ config: baseConfig, raw, defaultProvider: "openai" });
        if (resolved !== null) {
          expect(resolved.ref.provider.length).toBeGreaterThan(0);
          expect(resolved.ref.model.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: inputs(RUNS) },
    );
  });
});

describe("kernel inputs", () => {
  it("validateSessionInput / validateTurnInput: the input or a KernelInputError naming the field", () => {
    const field = fc.oneof(fc.anything(), fc.string({ maxLength: 20 }));
    fc.assert(
      fc.property(
        fc.oneof(
          fc.anything(),
          fc.record(
            { sessionKey: field, agentId: field, sessionId: field, workspaceDir: field, runOptions: field },
            { requiredKeys: [] },
          ),
        ),
        fc.oneof(
          fc.anything(),
          fc.record(
            { prompt: field, timeoutMs: field, ownerNumbers: field, runId: field },
            { requiredKeys: [] },
          ),
        ),
        (session, turn) => {
          clearErrorOrResult(
            () => validateSessionInput(session),
            [KernelInputError],
            (m) => m.includes("Invalid"),
          );
          clearErrorOrResult(
            () => validateTurnInput(turn),
            [KernelInputError],
            (m) => m.includes("Invalid"),
          );
        },
      ),
      { numRuns: inputs(RUNS) },
    );
  });
});

/** Model output: text with directive, media and reasoning-tag fragments. */
const replyTextArbitrary = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc
    .array(
      fc.oneof(
        fc.constantFrom(
          "[[reply_to_current]]",
          "[[reply_to:",
          "]]",
          "[[audio_as_voice]]",
          "[[",
          "MEDIA:",
          "MEDIA: file:///etc/passwd",
          "MEDIA: https://example.com/a.png",
          "file://%2Fetc",
          "NO_REPLY",
          "HEARTBEAT_OK",
          "<think>",
          "</think>",
          "<thinking>",
          "<final>",
          "</final>",
          "<antthinking>",
          "```",
          "\n",
          "`",
          " ",
        ),
        fc.string({ maxLength: 10 }),
      ),
      { maxLength: 40 },
    )
    .map((parts) => parts.join("")),
);

describe("reply directives and reasoning tags", () => {
  it("parse to text without throwing, whatever the model wrote", () => {
    fc.assert(
      fc.property(replyTextArbitrary, fc.option(fc.string({ maxLength: 10 })), (text, currentMessageId) => {
        const directives = parseReplyDirectives(text, currentMessageId === null ? {} : { currentMessageId });
        expect(directives.text).toBeTypeOf("string");
        expect(parseInlineDirectives(text)).toBeTypeOf("object");
        const stripped = stripReasoningTagsFromText(text);
        expect(stripped).toBeTypeOf("string");
        expect(stripped.length).toBeLessThanOrEqual(text.length);
      }),
      { numRuns: inputs(RUNS) },
    );
  });

  it("streamed in arbitrary deltas, the stateful parsers never throw", () => {
    fc.assert(
      fc.property(fc.array(replyTextArbitrary, { maxLength: 12 }), (deltas) => {
        const accumulator = new StreamingDirectiveAccumulator();
        const stripper = new ReasoningStreamStripper();
        for (const delta of deltas) {
          accumulator.consume(delta);
          stripper.push(delta);
        }
        accumulator.consume("", { final: true });
        stripper.finish();
      }),
      { numRuns: inputs(RUNS) },
    );
  });
});

/** JSONL-ish session files: real entry shapes with broken parents, types, versions and plain garbage. */
const piLineArbitrary = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.json(),
  fc
    .record(
      {
        type: fc.constantFrom(
          "session",
          "message",
          "model_change",
          "thinking_level_change",
          "compaction",
          "custom",
          "x",
        ),
        id: fc.oneof(fc.constantFrom("a", "b", "c", "d"), fc.string({ maxLength: 4 }), fc.integer()),
        parentId: fc.oneof(fc.constant(null), fc.constantFrom("a", "b", "c", "z"), fc.integer()),
        version: fc.oneof(fc.constantFrom(1, 2, 3, 4), fc.anything()),
        timestamp: fc.oneof(
          fc.constant("2026-01-01T00:00:00.000Z"),
          fc.string({ maxLength: 5 }),
          fc.integer(),
        ),
        cwd: fc.oneof(fc.constant("/work"), fc.anything()),
        message: fc.oneof(
          fc.record({
            role: fc.constantFrom("user", "assistant", "toolResult", "x"),
            content: fc.anything(),
          }),
          fc.anything(),
        ),
      },
      { requiredKeys: ["type"] },
    )
    .map((value) => JSON.stringify(value)),
);
const piFileArbitrary = fc.array(piLineArbitrary, { maxLength: 12 }).map((lines) => lines.join("\n"));

describe("legacy import files", () => {
  it("parsePiSessionText and parseOpenClawSessionIndex: a parse with a valid tree, or a reason", () => {
    fc.assert(
      fc.property(piFileArbitrary, fc.oneof(fc.string({ maxLength: 100 }), fc.json()), (pi, index) => {
        const parsed = parsePiSessionText(pi, "fuzz.jsonl");
        if (parsed.ok) expect(treeProblems(parsed.session.entries)).toEqual([]);
        else expect(parsed.reason.length).toBeGreaterThan(0);
        const sessions = parseOpenClawSessionIndex(index, "sessions.json");
        if (!sessions.ok) expect(sessions.reason.length).toBeGreaterThan(0);
      }),
      { numRuns: inputs(RUNS) },
    );
  });

  it("importing bad files into a real store never throws and never changes what was stored", async () => {
    const dir = mkdtempSync(join(tmpdir(), "reliability-import-"));
    const store = await openSessionStore({ stateDir: join(dir, "state") });
    try {
      const kept = store.openTranscript("main", "kept", {
        header: {
          type: "session",
          version: 3,
          id: "kept",
          timestamp: new Date(0).toISOString(),
          cwd: "/work",
        },
      });
      kept.append({
        type: "custom",
        id: "k1",
        parentId: null,
        timestamp: new Date(0).toISOString(),
        data: {},
      });
      await store.sessions.create({ agentId: "main", sessionKey: "agent:main:kept", sessionId: "kept" });
      const before = JSON.stringify({
        entries: kept.getEntries(),
        session: await store.sessions.list("main"),
      });
      let run = 0;
      await fc.assert(
        fc.asyncProperty(
          piFileArbitrary,
          fc.oneof(fc.string({ maxLength: 100 }), fc.json()),
          async (pi, index) => {
            run += 1;
            const piFile = join(dir, `fuzz-${run}.jsonl`);
            writeFileSync(piFile, pi);
            // Into a session id of its own, and over the kept one (a clash must be reported, not overwrite).
            await importPiSessionFile(store, piFile, { agentId: "main", sessionId: `fuzz-${run}` });
            await importPiSessionFile(store, piFile, {
              agentId: "main",
              sessionId: "kept",
              sessionKey: "agent:main:kept",
            });
            const indexDir = mkdtempSync(join(dir, "openclaw-"));
            writeFileSync(join(indexDir, "sessions.json"), index);
            await importOpenClawSessions(store, join(indexDir, "sessions.json"), { agentId: "main" });
            const keptEntries = kept.getEntries();
            expect(keptEntries[0]?.id).toBe("k1");
            expect(treeProblems(keptEntries)).toEqual([]);
          },
        ),
        { numRuns: inputs(40) },
      );
      const after = JSON.stringify({
        entries: kept.getEntries().slice(0, 1),
        session: (await store.sessions.list("main")).filter(
          (session) => session.sessionKey === "agent:main:kept",
        ),
      });
      expect(JSON.parse(after).entries).toEqual(JSON.parse(before).entries);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

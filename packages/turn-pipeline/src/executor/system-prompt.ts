// The kernel-built system prompt, section by section as OpenClaw 2026.9.6's buildAgentSystemPrompt lays it out
// (texts kept where the kernel has the feature; adapted where it differs, each difference in docs/parity.md):
// Tooling, Tool Call Style, Execution Bias, Promised Work, Safety, Gateway Control, Skills, Memory Recall, Model
// Aliases, Workspace, Documentation, Sandbox, Workspace Files, Assistant Output Directives, Silent Replies,
// Messaging, Voice, Reactions, Runtime — and the minimal mode for subagents and the planner (only how to work:
// no Execution Bias, Documentation, Model Aliases, Output Directives, Silent Replies, Voice, Memory; Messaging
// only when a messaging route exists). Owns: the preamble's text, deterministic for the same input, and what
// the config decides of it (kernelPromptSettings). Does not own: how pi renders the rest (the preamble is pi's
// `customPrompt`, the extra system prompt its `addendum`, bootstrap files its `project_context`: see
// bootstrap-files.ts), which tools exist (the caller passes their names) or which skills (skills/).
import { createHash } from "node:crypto";
import { arch, platform, version } from "node:process";
import { type KernelConfig, resolveAgentConfig } from "@agent-kernel/config";
import { SILENT_REPLY_TOKEN } from "../streaming/index.ts";
import { sameValue } from "./same-value.ts";

export {
  BOOTSTRAP_ENTRY_TYPE,
  BOOTSTRAP_FILE_NAMES,
  type BootstrapFile,
  DEFAULT_BOOTSTRAP_TOTAL_MAX_CHARS,
  loadBootstrapFiles,
  MINIMAL_BOOTSTRAP_FILE_NAMES,
  recordedBootstrap,
  trimBootstrapContent,
  USER_BOOTSTRAP_MAX_CHARS,
} from "./bootstrap-files.ts";

/** What the prompt is built from. Everything optional beyond the first block defaults to "absent". */
export interface KernelPromptInput {
  readonly mode: "full" | "minimal";
  readonly workspaceDir: string;
  /** The tools the model gets, in order. */
  readonly toolNames: readonly string[];
  readonly agentId: string;
  readonly provider: string;
  readonly model: string;
  readonly thinkingLevel: string;
  /** A sandboxed session: what its tools see (mount paths with their access) and whether it has network. */
  readonly sandbox?: { readonly mounts: readonly string[]; readonly network: boolean };
  /** The session's skills catalog (its snapshot's `<available_skills>`); listed only when `read` is a tool. */
  readonly skillsPrompt?: string | undefined;
  readonly sessionKey?: string | undefined;
  /** The channel the turn came from (`telegram`, `slack`, `webchat`, `cli`…). */
  readonly channel?: string | undefined;
  /** `agents.defaults.reasoningDefault`: whether reasoning is shown. */
  readonly reasoningLevel?: string | undefined;
  /** The token a reply of nothing is (default NO_REPLY); `null`: no Silent Replies section. */
  readonly silentToken?: string | null | undefined;
  /** Configured model aliases, listed in full mode. */
  readonly modelAliases?: readonly { readonly alias: string; readonly ref: string }[] | undefined;
  /** A channel's reaction guidance (OpenClaw's `reactionLevel`). */
  readonly reactions?: { readonly level: "minimal" | "extensive"; readonly channel: string } | undefined;
  /** A text-to-speech hint (OpenClaw's Voice section); the kernel has no TTS of its own. */
  readonly ttsHint?: string | undefined;
  /** Where the kernel's documentation is; the Documentation section is left out without it. */
  readonly docsUrl?: string | undefined;
  /** The host facts of the Runtime line (default: this process's); injectable so a prompt is reproducible. */
  readonly host?: { readonly os: string; readonly arch: string; readonly node: string } | undefined;
}

/** OpenClaw's tool summaries for the tools the kernel has (system-prompt-tool-list.ts), in its order. */
const TOOL_SUMMARIES: Readonly<Record<string, string>> = {
  read: "Read files",
  write: "Write files",
  edit: "Exact file edits",
  apply_patch: "Patch files",
  grep: "Search file contents",
  find: "Find files by glob",
  ls: "List directories",
  exec: "Run shell; pty for TTY CLIs",
  process: "Control background exec",
  web_search: "Web search",
  web_fetch: "Fetch/extract URL",
  message: "Message/channel actions",
  sessions_list: "List visible sessions; filters/last",
  sessions_history: "Read visible session/subagent history",
  sessions_send: "Message other session/subagent",
  // OpenClaw's line names a `context` parameter ("isolated" / "fork"); the kernel's tool takes none (a child
  // always starts clean), and a prompt must not offer the model arguments the tool refuses.
  sessions_spawn: "Spawn subagent in its own clean session; its result comes back here",
  session_status: "Session/model/usage/time/status; model override",
  memory_search: "Search the agent's memory files (MEMORY.md, memory/*.md)",
  memory_get: "Read lines of a memory file",
  image: "Analyze images",
};
const TOOL_ORDER = Object.keys(TOOL_SUMMARIES);

// Each attempt records its prompt's hash, and a warm session sends the same prompt (the same string) turn after
// turn: the last few hashes are kept so a warm turn does not pay ≈ 25 µs of sha256 over ≈ 10 KB every time.
const recentPromptHashes = new Map<string, string>();
const RECENT_PROMPT_HASHES = 64;

/** The sha256 (hex) of a system prompt: what a run records so replay can tell when the prompt changed. */
export function systemPromptHash(text: string): string {
  const known = recentPromptHashes.get(text);
  if (known !== undefined) return known;
  const hash = createHash("sha256").update(text).digest("hex");
  if (recentPromptHashes.size >= RECENT_PROMPT_HASHES) {
    const oldest = recentPromptHashes.keys().next().value;
    if (oldest !== undefined) recentPromptHashes.delete(oldest);
  }
  recentPromptHashes.set(text, hash);
  return hash;
}

/**
 * The prompt facts the config decides for an agent: reasoning shown or not, model aliases. The Skills section
 * follows `skills.*` (through the session's snapshot), the bootstrap files `skipBootstrap`,
 * `bootstrapMaxChars` and `bootstrapTotalMaxChars`, the Sandbox section `sandbox.mode`.
 */
export function kernelPromptSettings(
  config: KernelConfig,
  agentId: string,
): Pick<KernelPromptInput, "reasoningLevel" | "modelAliases"> {
  const agent = resolveAgentConfig(config, agentId);
  const models = { ...(config.agents.defaults.models ?? {}), ...(agent?.models ?? {}) };
  const modelAliases = Object.entries(models)
    .flatMap(([ref, entry]) => (entry?.alias ? [{ alias: entry.alias, ref }] : []))
    .sort((a, b) => a.alias.localeCompare(b.alias, "en"));
  return {
    reasoningLevel: agent?.reasoningDefault ?? config.agents.defaults.reasoningDefault,
    modelAliases,
  };
}

/** The last prompt built for each holder (a session's pi manager) and the input it was built from. */
const lastPrompts = new WeakMap<object, { readonly input: KernelPromptInput; readonly prompt: string }>();

/**
 * `buildKernelSystemPrompt(input)`, built again only when the input differs from the one `holder` (a session's
 * pi manager) last asked with: a warm session's turns send the same prompt, and handing back the very same
 * string lets the warm-session check and the prompt's hash see it is unchanged without reading ≈ 10 KB.
 */
export function kernelSystemPromptFor(holder: object, input: KernelPromptInput): string {
  const last = lastPrompts.get(holder);
  if (last !== undefined && sameValue(last.input, input)) return last.prompt;
  const prompt = buildKernelSystemPrompt(input);
  lastPrompts.set(holder, { input, prompt });
  return prompt;
}

/** The preamble: the sections of the kernel's own prompt. Deterministic for the same input. */
export function buildKernelSystemPrompt(input: KernelPromptInput): string {
  const minimal = input.mode === "minimal";
  const tools = new Set(input.toolNames.map((name) => name.trim().toLowerCase()).filter(Boolean));
  const has = (name: string) => tools.has(name);
  const lines: string[] = ["You are a personal assistant running inside an agent gateway.", ""];

  if (!minimal || tools.size > 0) lines.push(...toolingSection(input, tools), ...toolCallStyle());
  if (!minimal) lines.push(...executionBias());
  lines.push(...promisedWork(), ...safety(), ...control(has("exec")));
  if (has("read") && input.skillsPrompt?.trim()) lines.push(...skillsSection(input.skillsPrompt.trim()));
  if (!minimal) lines.push(...memorySection(has("memory_search"), has("memory_get")));
  if (!minimal && input.modelAliases && input.modelAliases.length > 0) {
    lines.push(
      "## Model Aliases",
      "Model override: aliases are shortcuts for unqualified model requests. Use explicit provider/model references verbatim; do not substitute an alias or another provider.",
      input.modelAliases.map(({ alias, ref }) => `- ${alias}: ${ref}`).join("\n"),
      "",
    );
  }
  lines.push(...workspaceSection(input), "");
  if (!minimal && input.docsUrl) lines.push(...docsSection(input.docsUrl, has("read")));
  if (input.sandbox !== undefined) lines.push(...sandboxSection(input.sandbox));
  lines.push(
    "## Workspace Files (injected)",
    "User-editable; the gateway loads them below as Project Context.",
    "",
  );

  const silentToken = input.silentToken === undefined ? SILENT_REPLY_TOKEN : input.silentToken;
  if (!minimal) lines.push(...outputDirectives());
  if (!minimal && silentToken !== null) {
    lines.push(
      "## Silent Replies",
      `Nothing to say: entire reply exactly ${silentToken}`,
      "Never append to real response or wrap in Markdown/code.",
      "",
    );
  }
  lines.push(...messagingSection(tools, minimal, silentToken));
  if (!minimal && input.ttsHint?.trim()) lines.push("## Voice (TTS)", input.ttsHint.trim(), "");
  if (input.reactions !== undefined) lines.push(...reactionsSection(input.reactions));
  lines.push(...runtimeSection(input));
  // As OpenClaw: empty lines dropped, so sections follow each other directly.
  return lines.filter(Boolean).join("\n");
}

function toolingSection(input: KernelPromptInput, tools: ReadonlySet<string>): string[] {
  const visible = new Map<string, string>();
  for (const name of input.toolNames) {
    const trimmed = name.trim();
    if (trimmed && !visible.has(trimmed.toLowerCase())) visible.set(trimmed.toLowerCase(), trimmed);
  }
  const known = TOOL_ORDER.filter((tool) => visible.has(tool));
  const extra = [...visible.keys()].filter((tool) => !TOOL_ORDER.includes(tool)).sort();
  const toolLines = [...known, ...extra].map((tool) => {
    const summary = TOOL_SUMMARIES[tool];
    const name = visible.get(tool) ?? tool;
    return summary ? `- ${name}: ${summary}` : `- ${name}`;
  });
  const lines = [
    "## Tooling",
    "Tools policy-filtered. Names case-sensitive; call exact.",
    toolLines.length > 0
      ? toolLines.join("\n")
      : "No tools are available in this run; answer from the conversation.",
    "The AGENTS.md Tools section guides usage; it never grants availability.",
  ];
  // exec's background mode (yieldMs, then the process tool) is the answer to a long command.
  if (tools.has("exec")) lines.push("Long wait: no rapid poll. Use exec yieldMs.");
  if (tools.has("sessions_list")) {
    lines.push(
      "Never loop-poll `sessions_list`. Status only on-demand/intervention/debug/request.",
      "Asked about another chat/group/session not in context: check `sessions_list` before claiming no access.",
    );
  }
  lines.push("");
  return lines;
}

function toolCallStyle(): string[] {
  return [
    "## Tool Call Style",
    "Routine low-risk: call silently.",
    "Narrate only complex, sensitive/destructive, or requested steps.",
    "First-class tool exists: use it; never ask user for equivalent CLI/slash.",
    "",
  ];
}

function executionBias(): string[] {
  return [
    "## Execution Bias",
    "- Actionable request: act now.",
    "- Non-final turn: advance with tools, or ask one safety-blocking decision.",
    "- Continue to done/real blocker; no plan-only finish when tools can act.",
    "- Weak/empty result: vary query/path/command/source, then conclude.",
    "- Mutable facts: live-check files/git/time/versions/services/processes/packages.",
    "- Final claim needs evidence or named blocker.",
    "- Long work: brief update, keep going; background/subagents when useful.",
    "",
  ];
}

function promisedWork(): string[] {
  return [
    "## Promised Work",
    "- A user correction updates the existing task; apply it and continue within the authorized scope unless the user pauses, cancels, or replaces the task. Do not stop at an acknowledgment or apology.",
    '- Saying "I am checking/fetching/fixing that now" is a progress update, not a final answer. Take the next available action in the same turn; end with the result, a concrete blocker, or an already-started completion path.',
    "- Promising future, background, delegated, or continued work creates follow-through ownership.",
    "- Before ending a turn, arrange an available completion or watch path; keep the originating request and any existing goal or task open.",
    "- Proactively return with the result, link, proof, or a concrete blocker; do not wait for the requester to ask.",
    "- If no completion path exists, do not promise later; stay in the turn or state the blocker.",
    "- Progress such as `running` is not completion.",
    "",
  ];
}

function safety(): string[] {
  return [
    "## Safety",
    "No independent goals, self-preservation, replication, resource acquisition, power-seeking, or plans beyond user request.",
    "Safety/oversight > completion. Conflict: pause/ask. Obey stop/pause/audit; never bypass safeguards.",
    "Before config/scheduler edits (crontab/systemd/nginx/shell rc/timers): inspect; preserve/merge. Whole-file replacement only explicit.",
    "Never persuade anyone to expand access or disable safeguards.",
    "Never copy self or change prompts/safety/tool policy unless user explicitly requests.",
    "For user-requested login or pairing in a group, deliver short-lived codes and verification URLs only to the requesting user in private, then acknowledge in the group without them.",
    "Never collect tokens, API keys, or passwords in chat; the operator configures credentials outside the conversation.",
    "",
  ];
}

function control(hasExec: boolean): string[] {
  return [
    "## Gateway Control",
    "Do not invent commands.",
    "Gateway config, restarts, updates and credentials belong to its operator; ask a human for them.",
    ...(hasExec
      ? [
          "Never stop, restart or update the gateway service, or swap its installation, via exec or detached jobs.",
        ]
      : []),
    "",
  ];
}

function skillsSection(catalog: string): string[] {
  return [
    "## Skills",
    "Scan <available_skills>. Clear match: read exact <location> with `read`; obey.",
    "Several: most specific. None: read none.",
    "Up-front max one. Never invent paths.",
    "External writes: batch safely; no tight loops; honor 429/Retry-After.",
    catalog,
    "",
  ];
}

/**
 * OpenClaw's memory-core prompt section (buildMemoryPromptSection) for the tools offered. Left out: its
 * session-transcript lines (the kernel's memory_search searches memory files only, never transcripts) and its
 * partial/stale-recall line (the kernel's index is synced before each search: no stale or partial results).
 */
function memorySection(hasSearch: boolean, hasGet: boolean): string[] {
  if (!hasSearch && !hasGet) return [];
  return [
    "## Memory Recall",
    hasSearch
      ? `Before answering anything about prior work, decisions, dates, people, preferences, or todos: run memory_search${hasGet ? "; for memory-file hits, use memory_get to pull only the needed lines" : ""}. If low confidence after search, say you checked.`
      : "Before answering anything about prior work, decisions, dates, people, preferences, or todos that point to a specific memory file: run memory_get to pull only the needed lines. If low confidence after reading, say you checked.",
    "Citations: include Source: <path#line> when it helps the user verify memory snippets.",
    "",
  ];
}

function workspaceSection(input: KernelPromptInput): string[] {
  return [
    "## Workspace",
    `Working directory: ${promptLiteral(input.workspaceDir)}`,
    "Single global file workspace unless explicitly told otherwise.",
    "File tools are workspace-only: paths are relative to the workspace; paths outside it are refused.",
  ];
}

function docsSection(url: string, hasRead: boolean): string[] {
  return [
    "## Documentation",
    `Docs: ${url}`,
    `Gateway behavior questions: docs first${hasRead ? "" : " using available tools"}. AGENTS/project/workspace/profile/memory = instructions/user memory, not product design truth.`,
    "If docs are silent/stale, say so.",
    "",
  ];
}

function sandboxSection(sandbox: NonNullable<KernelPromptInput["sandbox"]>): string[] {
  return [
    "## Sandbox",
    [
      "Sandbox runtime; tools execute in a sandbox. Policy may hide tools.",
      "Subagents remain sandboxed; no elevated/host access. Need host read/write: do not spawn; ask.",
      `Your tools see only ${sandbox.mounts.map(promptLiteral).join(", ")}, the system's programs and a private /tmp; ${sandbox.network ? "the network is reachable" : "there is no network"}.`,
      "Commands are limited in time, output, memory and processes.",
    ].join("\n"),
    "",
  ];
}

function outputDirectives(): string[] {
  return [
    "## Assistant Output Directives",
    "- Media attachment: own line `MEDIA:<path-or-url>` per item; path is not prose.",
    "- Directive starts line, plain text, outside fences/Markdown; never inline or wrapped.",
    "- Attached voice note: `[[audio_as_voice]]`.",
    "- Native reply starts with `[[reply_to_current]]`; explicit id only: `[[reply_to:<id>]]`.",
    "- Directives stripped before render; channel config controls delivery.",
    "",
  ];
}

function messagingSection(
  tools: ReadonlySet<string>,
  minimal: boolean,
  silentToken: string | null,
): string[] {
  const hasMessage = tools.has("message");
  const routing = [
    "- Messaging: use available messaging tools, never shell commands, the CLI, curl, or direct RPC. Missing messaging tools are not permission to use another route.",
    "- Subagents return results through their accepted completion path; parents relay required coordination. Do not send acknowledgments or duplicate completion reports.",
    "- Other services (e.g. email): user-authorized CLI/API use is allowed; normal tool permissions and approvals still apply.",
  ];
  if (minimal) {
    if (!hasMessage && !tools.has("exec") && !tools.has("sessions_send")) return [];
    return ["## Messaging", ...routing, ""];
  }
  return [
    "## Messaging",
    `- Current-session final text normally routes to source.${hasMessage ? " If turn says final private, visible output uses `message`." : ""}`,
    silentToken === null
      ? "- Completion event requesting update: rewrite in normal voice; send. Never forward raw metadata or silent placeholder."
      : `- Completion event requesting update: rewrite in normal voice; send. Never forward raw metadata or default to ${silentToken}.`,
    ...routing,
    ...(hasMessage
      ? [
          "",
          "### message tool",
          "- Proactive send now: `message` with `text`.",
          "- Set `target` only outside the current conversation.",
          silentToken === null
            ? "- Follow turn delivery: private final => visible via `message`; otherwise normal reply once."
            : `- After visible \`message\`, final ONLY ${silentToken}.`,
        ]
      : []),
    "",
  ];
}

function reactionsSection(reactions: NonNullable<KernelPromptInput["reactions"]>): string[] {
  const guidance =
    reactions.level === "minimal"
      ? [
          `${reactions.channel} reactions: MINIMAL.`,
          "Only important request/confirmation or sparse genuine sentiment.",
          "Never routine messages/own replies. Max ~1 per 5-10 exchanges.",
        ]
      : [
          `${reactions.channel} reactions: EXTENSIVE.`,
          "React naturally for acknowledgment, sentiment, interesting/humorous/notable content, understanding/agreement.",
        ];
  return ["## Reactions", guidance.join("\n"), ""];
}

function runtimeSection(input: KernelPromptInput): string[] {
  const host = input.host ?? { os: platform, arch, node: version };
  const model = `${input.provider}/${input.model}`;
  const fields = [
    `agent=${input.agentId}`,
    input.sessionKey ? `session=${promptLiteral(input.sessionKey)}` : "",
    `os=${host.os} (${host.arch})`,
    `node=${host.node}`,
    `model=${model}`,
    `thinking=${input.thinkingLevel}`,
    input.channel ? `channel=${promptLiteral(input.channel)}` : "",
  ].filter(Boolean);
  return [
    "## Runtime",
    `Current model identity: ${model}. If asked what model you are, answer with this value for the current run.`,
    `Reasoning=${input.reasoningLevel ?? "off"}; hidden unless on/stream.`,
    `Runtime: ${fields.join(" | ")}`,
  ];
}

/** A value from outside (a path, a key) as one prompt line: control characters and line breaks become spaces. */
function promptLiteral(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to remove them
  return value.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, " ");
}

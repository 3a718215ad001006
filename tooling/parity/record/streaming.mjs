// Records parity fixtures for @agent-kernel/turn-pipeline's streaming normalisation from the real
// openclaw@2026.9.6 functions: stripReasoningTagsFromText, EmbeddedBlockChunker, parseReplyDirectives,
// splitMediaFromOutput and createStreamingDirectiveAccumulator. Inputs are hand-written cases plus cases from
// a seeded generator (same seed → same fixtures). Run by hand (Node 24 + the unpacked package):
//
//   OPENCLAW_DIST=/work/openclaw-env/openclaw/package/dist /work/openclaw-env/node24/package/bin/node \
//     tooling/parity/record/streaming.mjs
//
// Writes packages/turn-pipeline/fixtures/openclaw/streaming/*.json.
import fs from "node:fs";
import { register } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { seededRandom } from "../seeded-random.mjs";

// Some chunks import runtime dependencies (e.g. @openclaw/fs-safe). When the package's node_modules does not
// resolve them (the §15 set-up may leave the deps one level down, in node_modules/node_modules), retry bare
// specifiers from OPENCLAW_DEPS (default: <dist>/../node_modules/node_modules).
const depsDir =
  process.env.OPENCLAW_DEPS ?? path.resolve(process.env.OPENCLAW_DIST ?? ".", "../node_modules/node_modules");
if (fs.existsSync(depsDir)) {
  const hook = `export async function resolve(specifier, context, next) {
    try { return await next(specifier, context); } catch (error) {
      if (error?.code !== "ERR_MODULE_NOT_FOUND" || /^[./]|^file:|^node:/.test(specifier)) throw error;
      return next(specifier, { ...context, parentURL: ${JSON.stringify(`file://${depsDir}/`)} });
    }
  }`;
  register(`data:text/javascript,${encodeURIComponent(hook)}`);
}
const { get } = await import("../load-openclaw.mjs");

const here = path.dirname(fileURLToPath(import.meta.url));
const outDir = path.resolve(here, "../../../packages/turn-pipeline/fixtures/openclaw/streaming");
const repoRoot = path.resolve(here, "../../..");
fs.mkdirSync(outDir, { recursive: true });

const stripReasoningTagsFromText = await get("stripReasoningTagsFromText");
const EmbeddedBlockChunker = await get("EmbeddedBlockChunker");
const parseReplyDirectives = await get("parseReplyDirectives");
const splitMediaFromOutput = await get("splitMediaFromOutput");
const createStreamingDirectiveAccumulator = await get("createStreamingDirectiveAccumulator");

const rand = seededRandom(20260906);
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
const pick = (xs) => xs[Math.floor(rand() * xs.length)];

const WORDS = [
  "alpha",
  "beta",
  "gamma",
  "delta",
  "the",
  "a",
  "model",
  "reply",
  "stream",
  "chunk",
  "value",
  "1.5",
  "e.g.",
  "ok",
  "naïve",
  "😀",
  "x",
  "end",
  "code",
  "tag",
];
function sentence() {
  const n = int(1, 12);
  const ws = [];
  for (let i = 0; i < n; i++) ws.push(pick(WORDS));
  return ws.join(" ") + pick([".", ".", "!", "?", "", ","]);
}
function paragraph() {
  const n = int(1, 5);
  const ss = [];
  for (let i = 0; i < n; i++) ss.push(sentence());
  return ss.join(pick([" ", " ", "\n"]));
}
function fence(unclosed) {
  const marker = pick(["```", "```", "~~~", "````"]);
  const info = pick(["", "ts", "python", "txt title=x"]);
  const lines = [];
  for (let i = 0, n = int(1, 8); i < n; i++)
    lines.push(
      pick([
        "const x = 1;",
        "foo(bar)",
        "",
        "if (a) { b(); }",
        "a. b. c.",
        "<think>not a tag</think>",
        "[[reply_to_current]]",
        "MEDIA: ./inside.png",
        "😀😀",
      ]),
    );
  return `${marker}${info}\n${lines.join("\n")}${unclosed ? "" : `\n${marker}`}`;
}
function block() {
  const r = rand();
  if (r < 0.5) return paragraph();
  if (r < 0.65) return fence(false);
  if (r < 0.7) return fence(true);
  if (r < 0.85) return Array.from({ length: int(1, 4) }, () => `- ${sentence()}`).join("\n");
  return `# ${sentence()}`;
}
function markdownText(maxBlocks = 6) {
  const n = int(1, maxBlocks);
  const bs = [];
  for (let i = 0; i < n; i++) bs.push(block());
  return bs.join(pick(["\n\n", "\n\n", "\n", "\n\n\n"]));
}
function splitRandom(text) {
  const parts = [];
  let i = 0;
  while (i < text.length) {
    const n = int(1, Math.max(1, pick([1, 3, 16, 64, 400])));
    parts.push(text.slice(i, i + n));
    i += n;
  }
  return parts;
}

// ---------- block chunker ----------
function runChunker(chunking, steps) {
  const chunker = new EmbeddedBlockChunker(chunking);
  const drains = [];
  for (const step of steps) {
    if (step.append !== undefined) chunker.append(step.append);
    else {
      const out = [];
      chunker.drain({ force: step.force, emit: (text) => out.push(text) });
      drains.push(out);
    }
  }
  return { drains, bufferedText: chunker.bufferedText };
}
const chunkerCases = [];
const handChunker = [
  [
    "paragraph break",
    { minChars: 5, maxChars: 40 },
    ["Alpha paragraph.\n\nBeta paragraph that is long enough."],
  ],
  [
    "fence never split when it fits",
    { minChars: 10, maxChars: 60 },
    ["Intro text here.\n```js\nconst a = 1;\nconst b = 2;\n```\nAfter the fence."],
  ],
  [
    "forced cut reopens fence with info",
    { minChars: 5, maxChars: 30 },
    [`\`\`\`python\n${"print('x')\n".repeat(8)}\`\`\`\n`],
  ],
  [
    "sentence break",
    { minChars: 10, maxChars: 50, breakPreference: "sentence" },
    ["One sentence here. Two sentences here! Three? Four."],
  ],
  [
    "newline preference waits",
    { minChars: 10, maxChars: 80, breakPreference: "newline" },
    ["no newline in this text but long enough"],
  ],
  ["decimal is not a sentence end", { minChars: 3, maxChars: 20 }, ["Value is 1.5 and more words follow"]],
  [
    "flushOnParagraph",
    { minChars: 30, maxChars: 200, flushOnParagraph: true },
    ["First paragraph.\n\nSecond paragraph.\n\nThird paragraph is here.\n\n"],
  ],
  ["hard cut surrogate", { minChars: 1, maxChars: 5 }, ["😀😀😀😀😀😀"]],
  ["min greater than max", { minChars: 50, maxChars: 10 }, ["word ".repeat(30)]],
  ["tilde fence", { minChars: 5, maxChars: 25 }, [`~~~\n${"line line line\n".repeat(5)}~~~\nafter`]],
];
for (const [name, chunking, parts] of handChunker) {
  const steps = [];
  for (const p of parts) {
    steps.push({ append: p }, { force: false });
  }
  steps.push({ force: true });
  chunkerCases.push({ name, chunking, steps, expected: runChunker(chunking, steps) });
}
for (let i = 0; i < 300; i++) {
  const text = markdownText(i % 10 === 0 ? 14 : 6);
  const minChars = int(1, 120);
  const maxChars = int(Math.max(8, minChars - 10), minChars + int(0, 300));
  const chunking = {
    minChars,
    maxChars,
    breakPreference: pick(["paragraph", "paragraph", "newline", "sentence"]),
  };
  if (rand() < 0.15) chunking.flushOnParagraph = true;
  const steps = [];
  for (const p of splitRandom(text)) {
    steps.push({ append: p });
    if (rand() < 0.8) steps.push({ force: false });
    if (rand() < 0.03) steps.push({ force: true });
  }
  steps.push({ force: true });
  chunkerCases.push({ name: `generated ${i}`, chunking, steps, expected: runChunker(chunking, steps) });
}
// The chunker moved to packages/markdown (shared with the channels); its fixture lives there.
writeTo(path.join(repoRoot, "packages/markdown/fixtures/openclaw"), "block-chunker.json", chunkerCases);

// ---------- reasoning tags (final text) ----------
const tagCases = [];
const handTags = [
  "a <think>x</think> b",
  "<think>Answer...",
  "Before <think>unclosed",
  "Internal reasoning </think> final answer",
  "<think>outer <think>inner</think> still</think>x",
  "A<final>1</final>B",
  "<final>Only this</final>",
  "A <think>x</think> B",
  "Use `<think>` literally",
  "```\n<think>in code</think>\n```\nafter",
  "```\n<think>unclosed fence protects",
  "`unclosed <think>hidden</think> tick",
  '<thinking foo="a>b">hidden</thinking>shown',
  "<reasoning>r</reasoning>visible",
  "<internal>secret</internal>visible",
  "<internal>never recovered",
  "< think >spaced</ think >ok",
  "<think/>self closing",
  "<thinker>not a tag</thinker>",
  "<foo:think>x</foo:think>",
  "<final-result>keep</final-result>",
  "<thinking>ns</thinking>done",
  "<mm:think>mm</mm:think>done",
  "<antthinking>a</antthinking>b",
  "<think",
  "text <think attr='1' other=\"2\">x</think> y",
  "<think>a</think>",
  "  padded <think>x</think>  ",
  "    indented <think>code</think>\n\nnext",
  "x <THINK>upper</THINK> y",
  "<final>a</final><final>b</final>",
  '<final foo="bar">attr</final>',
];
const optionSets = [
  undefined,
  { mode: "preserve" },
  { recoverUnclosed: false },
  { scope: "leading" },
  { trim: "none" },
  { trim: "start" },
];
for (const text of handTags) {
  for (const options of optionSets)
    tagCases.push({ text, options, expected: stripReasoningTagsFromText(text, options) });
}
const TAG_PIECES = [
  "<think>",
  "</think>",
  "<thinking>",
  "</thinking>",
  "<final>",
  "</final>",
  "<reasoning>",
  "</reasoning>",
  "<internal>",
  "</internal>",
  "<thought>",
  "</thought>",
  "<think/>",
  "<think>",
  "</think>",
  '<think a="x>y">',
  "`",
  "``",
  "```\n",
  "\n```\n",
  "<",
  ">",
  " ",
  "\n",
  "\n\n",
];
for (let i = 0; i < 300; i++) {
  const parts = [];
  for (let j = 0, n = int(1, 12); j < n; j++) parts.push(rand() < 0.45 ? pick(TAG_PIECES) : sentence());
  const text = parts.join(pick(["", " "]));
  const options = pick(optionSets);
  tagCases.push({ text, options, expected: stripReasoningTagsFromText(text, options) });
}
write("strip-reasoning-tags.json", tagCases);

// ---------- reply directives + media ----------
const directiveCases = [];
const mediaCases = [];
const handDirectives = [
  "[[reply_to_current]] Hello",
  "[[reply_to: 123 ]] Hi",
  "[[ reply_to : abc ]] [[reply_to:def]] last wins",
  "[[reply_to_current]] [[reply_to:9]] explicit beats current",
  "[[audio_as_voice]] voice",
  "Say[[reply_to_current]]hello",
  "`[[reply_to_current]]` in code",
  "```\n[[reply_to_current]]\n```",
  "[[media:https://example.com/a.png]] stays literal",
  "NO_REPLY",
  "  no_reply  ",
  "I said NO_REPLY today",
  "HEARTBEAT_OK",
  "Line one\r\nLine two   with  spaces\n\n\n\nend",
  "[[reply_to:\u0007id[x]]] control chars",
  "MEDIA: https://example.com/cat.png\nCaption",
  "MEDIA: /tmp/a.png",
  "MEDIA: ./out/chart.png and text",
  'MEDIA: "/tmp/with space.png"',
  "MEDIA: '/tmp/single quoted.png'",
  "MEDIA: `./tick.png`",
  "MEDIA: http://example.com/a.png",
  "MEDIA: https://localhost/a.png",
  "MEDIA: https://10.0.0.1/a.png",
  "MEDIA: https://169.254.169.254/latest",
  "MEDIA: https://[::1]/a.png",
  "MEDIA: https://user:pw@example.com/a.png",
  "MEDIA: https://metadata.google.internal/x",
  "MEDIA: https://printer.local/x.png",
  "MEDIA: https://example/x.png",
  "MEDIA: ../etc/passwd",
  "MEDIA: ~/pics/a.png",
  "MEDIA: ~root/a.png",
  "MEDIA: C:\\Users\\me\\a.png",
  "MEDIA: \\\\server\\share\\a.png",
  "MEDIA: file:///tmp/a.png",
  "MEDIA: file://localhost/tmp/b.png",
  "MEDIA: file://evil.com/c.png",
  "MEDIA: report.pdf",
  "MEDIA: justaword",
  "MEDIA: /tmp/my file name.png",
  "MEDIA: /tmp/a.png /tmp/b.png",
  "MEDIA: https://example.com/a.png https://example.com/b.png",
  "Text mentions MEDIA: inline and keeps it",
  "  media: ./lower.png",
  "```\nMEDIA: ./in-fence.png\n```",
  "MEDIA: /tmp/a.png\n[[audio_as_voice]]",
  "MEDIA: (./paren.png),",
  `MEDIA: ${"/x".repeat(2100)}.png`,
  "MEDIA: https://8.8.8.8/a.png",
  "MEDIA: https://100.64.0.1/a.png",
  "MEDIA: https://example.com./a.png",
  "[[reply_to_current]]\nMEDIA: https://example.com/a.png\nHi",
];
const MEDIA_PAYLOADS = [
  "https://example.com/a.png",
  "https://cdn.example.org/x/y.jpg?size=2",
  "http://example.com/a.png",
  "https://localhost/a.png",
  "https://192.168.1.2/x.png",
  "/tmp/a.png",
  "./b.png",
  "../c.png",
  "~/d.png",
  "~user/e.png",
  "file:///tmp/f.png",
  "g.png",
  "word",
  '"/tmp/q q.png"',
  "'./s s.png'",
  "`./t.png`",
  "/tmp/space name.png",
  "C:\\x\\y.png",
  "(./p.png),",
];
function directiveText() {
  const lines = [];
  for (let j = 0, n = int(1, 6); j < n; j++) {
    const r = rand();
    if (r < 0.3)
      lines.push(
        `${pick(["", "  ", "\t"])}${pick(["MEDIA:", "media:", "MEDIA: "])}${pick(["", " "])}${pick(MEDIA_PAYLOADS)}${rand() < 0.3 ? ` ${pick(MEDIA_PAYLOADS)}` : ""}`,
      );
    else if (r < 0.55)
      lines.push(
        `${pick(["[[reply_to_current]]", "[[reply_to: 42]]", "[[ reply_to:abc-1 ]]", "[[audio_as_voice]]", "[[reply_to_current]]"])}${pick([" ", "", "  "])}${sentence()}`,
      );
    else if (r < 0.62) lines.push(pick(["NO_REPLY", "HEARTBEAT_OK", "no_reply"]));
    else if (r < 0.7) lines.push(fence(false));
    else lines.push(`${sentence()}${rand() < 0.3 ? ` [[reply_to:${int(1, 999)}]] ${sentence()}` : ""}`);
  }
  return lines.join(pick(["\n", "\n", "\n\n"]));
}
for (const text of handDirectives) {
  directiveCases.push({
    text,
    options: { currentMessageId: "msg-1" },
    expected: clean(parseReplyDirectives(text, { currentMessageId: "msg-1" })),
  });
  mediaCases.push({ text, expected: clean(splitMediaFromOutput(text)) });
}
directiveCases.push({
  text: "[[reply_to_current]] x",
  options: {},
  expected: clean(parseReplyDirectives("[[reply_to_current]] x", {})),
});
directiveCases.push({
  text: "HEARTBEAT_OK",
  options: { silentToken: "HEARTBEAT_OK" },
  expected: clean(parseReplyDirectives("HEARTBEAT_OK", { silentToken: "HEARTBEAT_OK" })),
});
for (let i = 0; i < 300; i++) {
  const text = directiveText();
  directiveCases.push({
    text,
    options: { currentMessageId: "m" },
    expected: clean(parseReplyDirectives(text, { currentMessageId: "m" })),
  });
  mediaCases.push({ text, expected: clean(splitMediaFromOutput(text)) });
}
write("reply-directives.json", directiveCases);
write("split-media.json", mediaCases);

// ---------- streaming directive accumulator ----------
const accCases = [];
const handAcc = [
  ["Hello [[reply_", "to_current]] world"],
  ["Hello [", "[reply_to:12]] there"],
  ["Text\nMED", "IA: ./a.png\n", "more"],
  ["NO", "_REP", "LY"],
  ["NO_REPLY", "Actual text"],
  ["[[audio_as_voice]]"],
  ["first [[reply_to:1]]", " second [[reply_to:2]]"],
];
for (const chunks of handAcc) accCases.push(runAcc(chunks));
for (let i = 0; i < 200; i++) accCases.push(runAcc(splitRandom(directiveText()).slice(0, 12)));
function runAcc(chunks) {
  const acc = createStreamingDirectiveAccumulator();
  const results = chunks.map((chunk, index) =>
    clean(acc.consume(chunk, { final: index === chunks.length - 1 })),
  );
  return { chunks, expected: results };
}
write("streaming-directives.json", accCases);

function clean(value) {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}
function write(name, cases) {
  writeTo(outDir, name, cases);
}

function writeTo(dir, name, cases) {
  fs.writeFileSync(
    path.join(dir, name),
    `${JSON.stringify({ source: "openclaw@2026.9.6", recordedBy: "tooling/parity/record/streaming.mjs", cases }, null, 1)}\n`,
  );
  console.log(name, cases.length);
}

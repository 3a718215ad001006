// Throughput of the composed ReplyStream (tag stripping + block chunking + directive parsing per block +
// reasoning + the final payload, and with partials on the streaming directive accumulator for partial text)
// on a realistic 5 MB reply delivered in 1-byte, 16-byte and 4 KB deltas (and 16-byte deltas processed in
// 64-byte batches, a partial-text preview after each, as a slow stream's event-loop turns do), against
// OpenClaw's own EmbeddedBlockChunker on the same input in the same run (loaded from OPENCLAW_DIST when set;
// it loads under Node 22; its 16 B figure is the baseline, its 4 KB figure a reference) and a naive re-scan
// chunker that always runs. Each delivery runs twice: as a block-streaming channel subscribes (partials off) and with every
// output. A second suite shows cost growing linearly: the same stream on 1 MB and 8 MB. Two reference cases
// show what any consumer of 1-byte deltas pays before processing them: one that only reads each delta's character
// (the floor), one that collects them into lines.
//
// The 1-byte deltas are made as the stream goes (`text[i]`: V8 shares one-character strings, so nothing is
// allocated), as a provider's stream parser hands them over: an array of 5 million of them, alive while a case
// runs, cost every major collection a 40 MB trace (about a third of a 1-byte case's time in a quick test) that
// no real stream pays. The other deltas are arrays made once.
//
// Targets (issues 6 and 24, stated only when OpenClaw's chunker is the baseline): ≥ 20× OpenClaw's chunker at
// 16 B and 4 KB deltas, partials on and off; at 1 B, ≥ 50× OpenClaw's chunker fed the same 1-byte deltas.

import { type BenchCase, type BenchSuite, defineSuite } from "@agent-kernel/bench";
import type { AssistantMessage, AssistantMessageEvent } from "@earendil-works/pi-ai";
import { ReplyStream } from "../src/streaming/index.ts";

const CHUNKING = { minChars: 800, maxChars: 1200, breakPreference: "paragraph" as const };

function realisticReply(bytes: number): string {
  let seed = 42;
  const rand = (): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const words = [
    "the",
    "stream",
    "chunker",
    "keeps",
    "fences",
    "balanced",
    "while",
    "reasoning",
    "is",
    "hidden",
    "value",
    "1.5",
    "naïve",
    "result",
  ];
  const sentence = (): string => {
    const n = 6 + Math.floor(rand() * 14);
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(words[Math.floor(rand() * words.length)] ?? "x");
    return `${out.join(" ")}.`;
  };
  const parts: string[] = [];
  let size = 0;
  while (size < bytes) {
    const r = rand();
    let block: string;
    if (r < 0.55) block = Array.from({ length: 2 + Math.floor(rand() * 5) }, sentence).join(" ");
    else if (r < 0.7)
      block = Array.from({ length: 3 + Math.floor(rand() * 4) }, () => `- ${sentence()}`).join("\n");
    else if (r < 0.85) {
      const lines = Array.from(
        { length: 5 + Math.floor(rand() * 40) },
        (_, i) => `  const v${i} = compute(${i}); // ${sentence()}`,
      );
      block = `\`\`\`ts\n${lines.join("\n")}\n\`\`\``;
    } else if (r < 0.93) block = `<think>${sentence()} ${sentence()}</think>${sentence()}`;
    else if (r < 0.97) block = `[[reply_to_current]] ${sentence()}`;
    else block = `MEDIA: https://example.com/img-${Math.floor(rand() * 1000)}.png`;
    parts.push(block);
    size += block.length + 2;
  }
  return parts.join("\n\n").slice(0, bytes);
}

/** A reply delivered one character at a time, each delta made when it is delivered (see the header). */
class CharDeltas {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}
type Deltas = readonly string[] | CharDeltas;

function split(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

const partial = {} as AssistantMessage;
/** `inputBatchChars`: deltas processed per this many characters (default: ReplyStream's 4096). */
function runReplyStream(deltas: Deltas, partials = true, inputBatchChars?: number): number {
  const stream = new ReplyStream({
    blockStreaming: { chunking: CHUNKING, breakMode: "text_end" },
    reasoningMode: "stream",
    partials,
    ...(inputBatchChars === undefined ? {} : { inputBatchChars }),
  });
  let blocks = 0;
  stream.subscribe((event) => {
    if (event.type === "block") blocks++;
  });
  stream.handle({ type: "start", partial });
  deliver(stream, deltas);
  stream.handle({ type: "text_end", contentIndex: 0, content: "", partial });
  stream.handle({ type: "done", reason: "stop", message: partial });
  stream.finish();
  return blocks;
}

/**
 * The delivery loops are alone in their functions (here and for the other cases): V8 first runs a long loop
 * through on-stack replacement, and code after the loop that had not run yet when that code was made has no
 * type feedback and throws it away again at the end of every run; a function that is only the loop is
 * optimised as a whole after its first runs, as a provider's long-lived event loop is.
 */
function deliver(stream: ReplyStream, deltas: Deltas): void {
  if (deltas instanceof CharDeltas) deliverChars(stream, deltas.text);
  else deliverEach(stream, deltas);
}

function deliverEach(stream: ReplyStream, deltas: readonly string[]): void {
  for (const delta of deltas) stream.handle({ type: "text_delta", contentIndex: 0, delta, partial });
}

function deliverChars(stream: ReplyStream, text: string): void {
  for (let index = 0; index < text.length; index++)
    stream.handle({ type: "text_delta", contentIndex: 0, delta: text.charAt(index), partial });
}

/**
 * A reference point for the 1-byte case: a consumer that only reads pi's event per delta and appends its text
 * to a pending line, handing the line on at each newline (no stripping, chunking or partials). What the
 * 1-byte case spends beyond this is ReplyStream's own work (ReplyStream keeps one-character deltas as code
 * units rather than appending strings, so its per-delta part can cost less than this).
 */
class PendingLineCollector {
  #pending = "";
  lines = 0;

  handle(event: AssistantMessageEvent): void {
    if (event.type !== "text_delta") return;
    const delta = event.delta;
    const pending = this.#pending + delta;
    this.#pending = pending;
    if (pending.length >= 256 || delta.includes("\n")) {
      this.lines += pending.charCodeAt(0) > 0 ? 1 : 0;
      this.#pending = "";
    }
  }
}

/**
 * The floor of the 1-byte case: a consumer that only reads pi's event per delta and the delta's character
 * (summing the character codes). What every consumer of 1-byte deltas pays before doing anything with them
 * (the one-character string, the event, the call, the read); V8 inlines `handle` here and allocates no event
 * object, as for ReplyStream. (Counting `delta.length` alone is cheaper still: V8 then need not make the
 * one-character string at all.)
 */
class DeltaReader {
  codeSum = 0;

  handle(event: AssistantMessageEvent): void {
    if (event.type === "text_delta") this.codeSum += event.delta.charCodeAt(0);
  }
}

function readChars(reader: DeltaReader, text: string): void {
  for (let index = 0; index < text.length; index++)
    reader.handle({ type: "text_delta", contentIndex: 0, delta: text.charAt(index), partial });
}

function runReadOnly(deltas: CharDeltas): number {
  const reader = new DeltaReader();
  readChars(reader, deltas.text);
  return reader.codeSum;
}

function collectChars(collector: PendingLineCollector, text: string): void {
  for (let index = 0; index < text.length; index++)
    collector.handle({ type: "text_delta", contentIndex: 0, delta: text.charAt(index), partial });
}

function runCollectOnly(deltas: CharDeltas): number {
  const collector = new PendingLineCollector();
  collectChars(collector, deltas.text);
  return collector.lines;
}

/** What a chunker does without scan positions: every delta re-scans the whole buffer for fences and breaks. */
function runNaiveRescan(deltas: readonly string[]): number {
  let buffer = "";
  let blocks = 0;
  for (const delta of deltas) {
    buffer += delta;
    while (buffer.length >= CHUNKING.minChars) {
      const fences = [...buffer.matchAll(/^ {0,3}(`{3,}|~{3,})/gm)].length;
      const window = buffer.slice(0, CHUNKING.maxChars);
      let at = fences % 2 === 0 ? window.lastIndexOf("\n\n") : -1;
      if (at < CHUNKING.minChars) at = buffer.length >= CHUNKING.maxChars ? CHUNKING.maxChars : -1;
      if (at < 0) break;
      blocks++;
      buffer = buffer.slice(at).replace(/^\n+/, "");
    }
  }
  return blocks + (buffer ? 1 : 0);
}

type OpenClawChunker = new (
  chunking: typeof CHUNKING,
) => {
  append(text: string): void;
  drain(params: { force: boolean; emit: (text: string) => void }): void;
};

async function loadOpenClawChunker(): Promise<OpenClawChunker | undefined> {
  if (!process.env.OPENCLAW_DIST) return undefined;
  try {
    const loaderPath = "../../../tooling/parity/load-openclaw.mjs";
    const loader = (await import(loaderPath)) as { get(name: string): Promise<unknown> };
    return (await loader.get("EmbeddedBlockChunker")) as OpenClawChunker;
  } catch (error) {
    console.warn(`OpenClaw chunker did not load: ${String(error)}`);
    return undefined;
  }
}

function appendAndDrainAll(
  chunker: InstanceType<OpenClawChunker>,
  deltas: readonly string[],
  emit: (text: string) => void,
): void {
  for (const delta of deltas) {
    chunker.append(delta);
    chunker.drain({ force: false, emit });
  }
}

function appendAndDrainChars(
  chunker: InstanceType<OpenClawChunker>,
  text: string,
  emit: (text: string) => void,
): void {
  for (let index = 0; index < text.length; index++) {
    chunker.append(text.charAt(index));
    chunker.drain({ force: false, emit });
  }
}

/** OpenClaw's chunker fed 1-byte deltas (its subscriber drains after every delta). */
function runOpenClawChars(Chunker: OpenClawChunker, deltas: CharDeltas): number {
  const chunker = new Chunker(CHUNKING);
  let blocks = 0;
  const emit = (): void => {
    blocks++;
  };
  appendAndDrainChars(chunker, deltas.text, emit);
  chunker.drain({ force: true, emit });
  return blocks;
}

function runOpenClaw(Chunker: OpenClawChunker, deltas: readonly string[]): number {
  const chunker = new Chunker(CHUNKING);
  let blocks = 0;
  const emit = (): void => {
    blocks++;
  };
  appendAndDrainAll(chunker, deltas, emit);
  chunker.drain({ force: true, emit });
  return blocks;
}

const FIVE_MB = 5 * 1024 * 1024;
const reply = realisticReply(FIVE_MB);
const deltas16 = split(reply, 16);
const deltas4k = split(reply, 4096);
const openClaw = await loadOpenClawChunker();
const OPENCLAW_CASE = "OpenClaw EmbeddedBlockChunker, 16 B deltas";
const NAIVE_CASE = "naive re-scan chunker, 16 B deltas";
/**
 * Issues 6 and 24: the composed stream at least 20× OpenClaw's chunker at 16 B and 4 KB deltas (its 16 B figure
 * is the baseline), with and without partial text. Stated only against OpenClaw: without OPENCLAW_DIST the
 * baseline is the naive chunker, and a ratio against it says nothing about this target. The 1 B rows have
 * theirs in the like-for-like suite (LIKE_FOR_LIKE_TARGET): against OpenClaw's 16 B figure they compare
 * different deliveries.
 */
const TARGET = openClaw ? { minSpeedup: 20, label: "≥ 20× OpenClaw's chunker" } : undefined;
/** Issue 24: at 1 B deltas, ≥ 50× OpenClaw's chunker fed the same 1-byte deltas. */
const LIKE_FOR_LIKE_TARGET = { minSpeedup: 50, label: "≥ 50× OpenClaw's chunker fed the same deltas" };
const targetFor = (label: string) => (label === "1 B" || TARGET === undefined ? {} : { target: TARGET });
const oneByte = new CharDeltas(reply);
const DELIVERIES: { label: string; deltas: () => Deltas }[] = [
  { label: "1 B", deltas: () => oneByte },
  { label: "16 B", deltas: () => deltas16 },
  { label: "4 KB", deltas: () => deltas4k },
];

// each case gets its deltas from `before` (untimed)
const throughputCases: BenchCase<Deltas>[] = [
  { name: NAIVE_CASE, before: () => deltas16, run: (d) => runNaiveRescan(d as readonly string[]) },
  {
    name: "reference: deliver 1 B deltas to a consumer that only reads each character",
    before: () => oneByte,
    run: (d) => runReadOnly(d as CharDeltas),
  },
  {
    name: "reference: collect 1 B deltas into lines, no processing",
    before: () => oneByte,
    run: (d) => runCollectOnly(d as CharDeltas),
  },
  // what a channel that streams blocks subscribes to: blocks, reasoning and the final payloads
  ...DELIVERIES.map(({ label, deltas }) => ({
    name: `ReplyStream, blocks + reasoning + final (partials off), ${label} deltas`,
    ...targetFor(label),
    before: deltas,
    run: (d: Deltas) => runReplyStream(d, false),
  })),
  // every output, partial text included (a consumer that also shows partial text)
  ...DELIVERIES.map(({ label, deltas }) => ({
    name: `ReplyStream, every output (partials on), ${label} deltas`,
    ...targetFor(label),
    before: deltas,
    run: (d: Deltas) => runReplyStream(d, true),
  })),
  {
    // a slow stream: the deltas of each event-loop turn are processed together, and the partial text previews
    // the line still arriving after every batch (here every 64 characters, about 80,000 previews)
    name: "ReplyStream, every output (partials on), 16 B deltas processed per 64 B",
    ...targetFor("16 B"),
    before: () => deltas16,
    run: (d: Deltas) => runReplyStream(d, true, 64),
  },
];
if (openClaw)
  throughputCases.unshift(
    {
      name: OPENCLAW_CASE,
      before: () => deltas16,
      run: (deltas) => runOpenClaw(openClaw, deltas as readonly string[]),
    },
    {
      // OpenClaw's chunker with its best delivery (fewest drains), for reference
      name: "OpenClaw EmbeddedBlockChunker, 4 KB deltas",
      before: () => deltas4k,
      run: (deltas) => runOpenClaw(openClaw, deltas as readonly string[]),
    },
  );

const throughput: BenchSuite = defineSuite({
  name: "composed reply stream, 5 MB realistic reply",
  baseline: openClaw ? OPENCLAW_CASE : NAIVE_CASE,
  // medians of more rounds: the machine is shared and single rounds vary by 2x
  iterations: 9,
  warmup: 1,
  bytesPerIteration: FIVE_MB,
  cases: throughputCases,
});

// The same 1-byte delivery through OpenClaw's chunker, for a like-for-like ratio at 1 B (the main suite's
// baseline is its 16 B figure, several times faster than this). One iteration: it takes about half a minute.
const OPENCLAW_CHARS_CASE = "OpenClaw EmbeddedBlockChunker, 1 B deltas";
const likeForLike: BenchSuite | undefined = openClaw
  ? defineSuite({
      name: "like for like at 1 B deltas: ReplyStream against OpenClaw's chunker fed the same 1-byte deltas",
      baseline: OPENCLAW_CHARS_CASE,
      iterations: 1,
      warmup: 0,
      bytesPerIteration: FIVE_MB,
      cases: [
        { name: OPENCLAW_CHARS_CASE, run: () => runOpenClawChars(openClaw, oneByte) },
        {
          name: "ReplyStream, blocks + reasoning + final (partials off), 1 B deltas",
          target: LIKE_FOR_LIKE_TARGET,
          run: () => runReplyStream(oneByte, false),
        },
        {
          name: "ReplyStream, every output (partials on), 1 B deltas",
          target: LIKE_FOR_LIKE_TARGET,
          run: () => runReplyStream(oneByte, true),
        },
      ],
    })
  : undefined;

const oneMb = split(realisticReply(1024 * 1024), 16);
const eightMb = split(realisticReply(8 * 1024 * 1024), 16);
const linear: BenchSuite = defineSuite({
  name: "linear growth: ReplyStream, 16 B deltas (8 MB should take ~8× as long as 1 MB)",
  baseline: "1 MB",
  iterations: 5,
  warmup: 1,
  cases: [
    { name: "1 MB", run: () => runReplyStream(oneMb) },
    { name: "8 MB", run: () => runReplyStream(eightMb) },
  ],
});

// A reply with no newline, delivered in one delta: the line is cut every 256 characters, and each cut must not
// search the rest of the line again (it did: 8 MB took ~100× as long as 1 MB).
const oneLine = (bytes: number): string[] => [
  "lorem ipsum dolor sit amet ".repeat(Math.ceil(bytes / 27)).slice(0, bytes),
];
const oneMbLine = oneLine(1024 * 1024);
const eightMbLine = oneLine(8 * 1024 * 1024);
const longLine: BenchSuite = defineSuite({
  name: "linear growth: one line without a newline in one delta (8 MB should take ~8× as long as 1 MB)",
  baseline: "1 MB",
  iterations: 5,
  warmup: 1,
  cases: [
    { name: "1 MB", run: () => runReplyStream(oneMbLine) },
    { name: "8 MB", run: () => runReplyStream(eightMbLine) },
  ],
});

export default likeForLike ? [throughput, likeForLike, linear, longLine] : [throughput, linear, longLine];

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BlockChunker, type BlockChunking } from "./block-chunker.ts";

type Step = { append: string } | { force: boolean };
type ChunkerCase = {
  name: string;
  chunking: BlockChunking;
  steps: Step[];
  expected: { drains: string[][]; bufferedText: string };
};

function run(chunking: BlockChunking, steps: Step[]): { drains: string[][]; bufferedText: string } {
  const chunker = new BlockChunker(chunking);
  const drains: string[][] = [];
  for (const step of steps) {
    if ("append" in step) chunker.append(step.append);
    else {
      const out: string[] = [];
      chunker.drain(step.force, (chunk) => out.push(chunk.text));
      drains.push(out);
    }
  }
  return { drains, bufferedText: chunker.bufferedText };
}

describe("BlockChunker parity with OpenClaw's EmbeddedBlockChunker", () => {
  // Recorded by tooling/parity/record/streaming.mjs from OpenClaw 2026.9.6.
  const fixture = join(import.meta.dirname, "../fixtures/openclaw/block-chunker.json");
  const cases = (JSON.parse(readFileSync(fixture, "utf8")) as { cases: ChunkerCase[] }).cases;
  it("has hand-written and generated cases", () => {
    expect(cases.length).toBeGreaterThan(300);
  });
  for (const c of cases) {
    it(c.name, () => {
      expect(run(c.chunking, c.steps)).toEqual(c.expected);
    });
  }
});

describe("BlockChunker", () => {
  it("closes and reopens a fence with its info string on a forced cut", () => {
    const chunker = new BlockChunker({ minChars: 5, maxChars: 30 });
    chunker.append(`\`\`\`python\n${"print('x')\n".repeat(6)}\`\`\`\n`);
    const out: string[] = [];
    chunker.drain(true, (c) => out.push(c.text));
    expect(out.length).toBeGreaterThan(1);
    for (const block of out) {
      expect(block.startsWith("```python\n")).toBe(true);
      expect(block.trimEnd().endsWith("```")).toBe(true);
    }
  });
});

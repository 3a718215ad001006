// @agent-kernel/markdown: the Markdown rules that streaming (turn-pipeline) and the channels share — code-fence
// spans and the block chunker that never breaks a fence. Owns no I/O and no channel dialects (channels-core
// formats for each channel).
export {
  type BlockChunk,
  BlockChunker,
  type BlockChunking,
  type BreakPreference,
  normalizeChunking,
} from "./block-chunker.ts";
export {
  type FenceScanState,
  type FenceSpan,
  findFenceSpanAt,
  isSafeFenceBreak,
  type OpenFence,
  scanFenceSpans,
  sliceUtf16Safe,
} from "./fences.ts";

// Messaging-tool duplicate filter: a reply text the agent already sent through the `message` tool is not
// delivered again. Owns: OpenClaw 2026.9.6's comparison (lowercase, emoji removed, whitespace collapsed;
// both texts ≥ 10 characters; one contains the other and is at least half its length). Does not own
// recording what the tool sent (the tool wiring passes the texts in).

const MIN_DUPLICATE_TEXT_LENGTH = 10;
const MIN_SUBSTRING_DUPLICATE_RATIO = 0.5;

export function normalizeTextForComparison(text: string): string {
  return text
    .toLowerCase()
    .replace(/\p{Emoji_Presentation}|\p{Extended_Pictographic}/gu, "")
    .replace(/\s+/g, " ")
    .trim();
}

export function isMessagingToolDuplicateNormalized(
  normalized: string,
  normalizedSentTexts: readonly string[],
): boolean {
  if (normalizedSentTexts.length === 0 || !normalized || normalized.length < MIN_DUPLICATE_TEXT_LENGTH)
    return false;
  return normalizedSentTexts.some((sent) => {
    if (!sent || sent.length < MIN_DUPLICATE_TEXT_LENGTH) return false;
    if (normalized.includes(sent)) return sent.length >= normalized.length * MIN_SUBSTRING_DUPLICATE_RATIO;
    return sent.includes(normalized) && normalized.length >= sent.length * MIN_SUBSTRING_DUPLICATE_RATIO;
  });
}

export function isMessagingToolDuplicate(text: string, sentTexts: readonly string[]): boolean {
  if (sentTexts.length === 0) return false;
  return isMessagingToolDuplicateNormalized(
    normalizeTextForComparison(text),
    sentTexts.map(normalizeTextForComparison),
  );
}

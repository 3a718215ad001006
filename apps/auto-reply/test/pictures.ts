// What the gateway's picture tests share: a real 1×1 PNG, a vision-capable scripted model for the config, and
// the image parts of the requests fake-llm recorded.

/** A valid 1×1 PNG. */
export const PNG_1X1 = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

/** The config's `models` section: fake-llm's OpenAI endpoint as a model that takes images. */
export function visionModels(baseUrl: string) {
  return {
    providers: {
      scripted: {
        baseUrl,
        api: "openai-completions",
        apiKey: "sk-test-key",
        models: [{ id: "m1", input: ["text", "image"], contextWindow: 32000, maxTokens: 4096 }],
      },
    },
  };
}

/** The image parts of an OpenAI chat-completions request body. */
export function imageUrls(body: unknown): string[] {
  const messages = (body as { messages?: { content?: unknown }[] }).messages ?? [];
  return messages.flatMap((message) =>
    Array.isArray(message.content)
      ? message.content
          .filter((part: { type?: string }) => part.type === "image_url")
          .map((part: { image_url: { url: string } }) => part.image_url.url)
      : [],
  );
}

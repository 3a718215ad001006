// @agent-kernel/channels-telegram: Telegram Bot API channel: long polling with durable offsets, MarkdownV2/HTML sending with chunking, replies, topics, media, typing, 429 retry_after.
export {};

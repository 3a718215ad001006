// @agent-kernel/fake-telegram: A local fake of the Telegram Bot API (same HTTP wire format) for adapter tests.
export {};

// @agent-kernel/fake-slack: A local fake of the Slack Web API and Events API sender (same HTTP wire format, real request signatures) for adapter tests.
export {};

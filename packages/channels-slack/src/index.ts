// @agent-kernel/channels-slack: Slack channel: Web API chat.postMessage with threads and mrkdwn, inbound Events API over HTTP with request signature verification.
export {};

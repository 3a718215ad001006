// @agent-kernel/channels-webchat: A local web chat channel: an HTTP + SSE server on loopback with token auth and a small page that streams block replies as they arrive.
export {};

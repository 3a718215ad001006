// @agent-kernel/auto-reply: The gateway daemon: starts the configured channels, applies access control and routing, and runs each inbound message through the kernel with block streaming back to the channel.
export {};

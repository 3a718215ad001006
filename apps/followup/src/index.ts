// @agent-kernel/followup: The queue runner: messages that arrive while a session is busy are stored durably and handled by queue mode (steer, followup, collect, interrupt) with cap and drop policy.
export {};

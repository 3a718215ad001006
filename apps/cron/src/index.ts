// @agent-kernel/cron: Scheduled isolated agent runs: cron expressions with time zones, a new session per run, delivery to a channel target, missed-run policy, no overlap, run history.
export {};

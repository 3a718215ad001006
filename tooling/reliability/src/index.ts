// @agent-kernel/reliability: The reliability suite: kill -9 crash trials, the fault matrix under load, fuzzing of every outside-input parser, and security checks.
export {};

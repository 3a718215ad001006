// @agent-kernel/hybrid-planner: A planner turn (tools off, final tag, thinking high) returns a zod-validated plan whose steps run as kernel turns with the plan's tool limits.
export {};

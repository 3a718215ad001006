// The one default that depends on the machine rather than on the config text: `agents.defaults.maxConcurrent`
// (max(8, 4 × CPUs)). Kept apart from validation so that a config whose validation is cached (load-cached.ts)
// still gets this machine's value. Does not own: the number's rule (defaults.ts) or validation (load.ts).
import { availableParallelism } from "node:os";
import { defaultMaxConcurrent } from "./defaults.ts";
import type { KernelConfig } from "./schema.ts";

/** Fills `agents.defaults.maxConcurrent` when unset, from `cpuCount` (default this machine's); returns `config`. */
export function fillMachineDefaults(config: KernelConfig, cpuCount?: number): KernelConfig {
  // availableParallelism honours cgroup CPU limits, unlike os.cpus().length.
  config.agents.defaults.maxConcurrent ??= defaultMaxConcurrent(cpuCount ?? availableParallelism());
  return config;
}

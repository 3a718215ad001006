// Vitest setup for every package: one fast-check seed for every property test, so a CI run is reproducible and
// a failure names the seed that shows it. Owns only the seed. `FC_SEED=<n>` picks another seed;
// `FC_SEED=random` lets fast-check draw one per property (what to run locally to look for new counterexamples).
import fc from "fast-check";

const DEFAULT_SEED = 20_261_122;
const raw = process.env.FC_SEED;
if (raw !== "random") {
  const seed = raw === undefined ? DEFAULT_SEED : Number(raw);
  if (!Number.isInteger(seed)) throw new Error(`FC_SEED must be an integer or "random", got "${raw}"`);
  fc.configureGlobal({ seed });
}

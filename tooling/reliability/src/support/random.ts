// Seeded randomness for the reliability suite: every random choice of a run comes from one printed seed, so
// a failing run can be repeated with `RELIABILITY_SEED=<seed>`. Owns the generator only.

/** The run's seed: `RELIABILITY_SEED` when set, else the clock. */
export function runSeed(env: NodeJS.ProcessEnv = process.env): number {
  const fromEnv = env.RELIABILITY_SEED;
  if (fromEnv !== undefined && fromEnv !== "") {
    const seed = Number(fromEnv);
    if (!Number.isSafeInteger(seed))
      throw new Error(`RELIABILITY_SEED must be an integer (got "${fromEnv}")`);
    return seed;
  }
  return Date.now() % 2 ** 31;
}

/** mulberry32: a small, fast 32-bit generator; returns floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** An integer in [min, max]. */
export function randomInt(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

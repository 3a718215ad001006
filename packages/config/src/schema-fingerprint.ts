// The fingerprint of the code that validates a config: a hash of every module load.ts reaches (the schema,
// the defaults, `${ENV}` substitution, the loader) and of the zod and json5 versions. Part of the validation
// cache's key (load-cached.ts), so a config validated by other code is validated again. Kept current by
// schema-fingerprint.test.ts, which recomputes it and fails with the value to write here.
export const CONFIG_SCHEMA_FINGERPRINT = "48b80b1c8529bddbeaeb691dfe8a38d9";

// The config schema, built on first use. Owns: loading schema.ts (and so building every zod schema of the
// config, ≈ 95 M instructions) only when a config is validated, a JSON Schema is made or the schema is asked
// for, and `configSchema`, the public name for it. A start whose config the validation cache answered
// (load-cached.ts) never builds it. Does not own: the schema itself (schema.ts).
//
// Synchronous, because validation is: the module is loaded with `require`. In a bundle (the agent binary),
// esbuild turns `require("./schema.ts")` into a call of the bundled module's lazy initialiser; unbundled
// (sources, tsc's dist) there is no `require` in an ES module, and one made for this file loads it.
import { createRequire } from "node:module";
import type * as SchemaModule from "./schema.ts";

type ConfigSchema = typeof SchemaModule.configSchema;

let loaded: ConfigSchema | undefined;

/** The config's zod schema, built now if it was not yet. */
export function configSchemaNow(): ConfigSchema {
  loaded ??= loadSchemaModule().configSchema;
  return loaded;
}

function loadSchemaModule(): typeof SchemaModule {
  try {
    return require("./schema.ts") as typeof SchemaModule;
  } catch (error) {
    if (!(error instanceof ReferenceError) || typeof require !== "undefined") throw error;
    const self = import.meta.url;
    return createRequire(self)(self.endsWith(".ts") ? "./schema.ts" : "./schema.js") as typeof SchemaModule;
  }
}

/**
 * The whole config file as one zod schema (`configSchema.parse(value)`, `configSchema.shape.cron`, …): a
 * stand-in that builds the real schema on its first use and answers every property of it from then on.
 */
export const configSchema: ConfigSchema = new Proxy({} as ConfigSchema, {
  get: (_target, property) => {
    const real = configSchemaNow();
    return Reflect.get(real, property, real);
  },
  has: (_target, property) => Reflect.has(configSchemaNow(), property),
  ownKeys: () => Reflect.ownKeys(configSchemaNow()),
  getOwnPropertyDescriptor: (_target, property) => {
    const descriptor = Reflect.getOwnPropertyDescriptor(configSchemaNow(), property);
    // The stand-in's own target is empty: a property it reports must be configurable (a proxy invariant).
    return descriptor === undefined ? undefined : { ...descriptor, configurable: true };
  },
  getPrototypeOf: () => Reflect.getPrototypeOf(configSchemaNow()),
});

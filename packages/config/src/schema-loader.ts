// The config schema, built on first use. Owns: loading schema.ts (and so building every zod schema of the
// config, ≈ 95 M instructions) only when a config is validated, a JSON Schema is made or the schema is asked
// for, and `configSchema`, the public name for it. A start whose config the validation cache answered
// (load-cached.ts) never builds it. Does not own: the schema itself (schema.ts).
//
// Synchronous, because validation is: the module is loaded with `require`. In a bundle (the agent binary
// from the sources, or anyone's esbuild bundle of dist, ESM or CJS), esbuild turns `require("./schema.js")`
// into a call of the bundled module's lazy initialiser (it resolves ./schema.js to schema.ts in the sources);
// unbundled (sources, tsc's dist) there is no `require` in an ES module, and one made for this file loads
// schema.ts or schema.js beside it.
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
  if (typeof require === "function") {
    try {
      // Bundled, esbuild resolves this at build time: to schema.ts when bundling the sources, to schema.js
      // when bundling dist (a third party's bundle of the published package), in ESM or CJS output.
      return require("./schema.js") as typeof SchemaModule;
    } catch (error) {
      // Only "there is no such file here" falls through (a `require` that is not the bundle's, next to the
      // sources); an error thrown while building the schema is real and is thrown on.
      if (!isSchemaNotFound(error)) throw error;
    }
  }
  const self = import.meta.url;
  return createRequire(self)(self.endsWith(".ts") ? "./schema.ts" : "./schema.js") as typeof SchemaModule;
}

function isSchemaNotFound(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return (
    (code === "MODULE_NOT_FOUND" && error.message.includes("./schema.js")) ||
    error.message.startsWith('Dynamic require of "./schema.js"')
  );
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

// Tool parameter schemas per provider family. Owns: rewriting a JSON Schema
// (TypeBox output) into what Gemini or OpenAI strict mode accept: unsupported
// keywords dropped, anyOf/oneOf flattened (literal unions become an enum,
// null variants become `nullable`), a missing `type` inferred, enum values
// made strings for Gemini, and OpenAI strict objects (every property
// required, optional ones nullable, no additional properties). Pure: the
// input is never changed. Does not own: choosing the family for a model.

/** The tool-schema dialect a provider accepts: Gemini's, OpenAI strict mode, or JSON Schema as written (`passthrough`). */
export type SchemaFamily = "gemini" | "openai-strict" | "passthrough";

type Schema = { readonly [key: string]: unknown };
type MutableSchema = { [key: string]: unknown };

/** Keywords Gemini's function declarations reject (OpenClaw 2026.9.6's list). */
export const GEMINI_UNSUPPORTED_KEYWORDS: ReadonlySet<string> = new Set([
  "~optional",
  "patternProperties",
  "additionalProperties",
  "$schema",
  "$id",
  "$ref",
  "$defs",
  "definitions",
  "examples",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "multipleOf",
  "pattern",
  "format",
  "minItems",
  "maxItems",
  "uniqueItems",
  "minProperties",
  "maxProperties",
  "not",
]);

const isSchema = (value: unknown): value is Schema =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const isNullVariant = (schema: Schema) =>
  schema.type === "null" || ("const" in schema && schema.const === null);

function literalOf(schema: Schema): unknown {
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length === 1) return schema.enum[0];
  return undefined;
}

function inferType(schema: Schema): string | undefined {
  if (schema.type !== undefined) return undefined;
  if (isSchema(schema.properties)) return "object";
  if (schema.items !== undefined) return "array";
  if (Array.isArray(schema.enum)) {
    const kinds = new Set(schema.enum.map((value) => typeof value));
    if (kinds.size === 1)
      return [...kinds][0] === "number" ? "number" : [...kinds][0] === "boolean" ? "boolean" : "string";
  }
  if ("const" in schema && typeof schema.const === "string") return "string";
  return undefined;
}

/** anyOf/oneOf → one schema: literal unions become an enum, null variants `nullable`, else the first variant. */
function flattenUnion(schema: Schema, variants: readonly Schema[]): MutableSchema {
  const rest: MutableSchema = Object.fromEntries(
    Object.entries(schema).filter(([key]) => key !== "anyOf" && key !== "oneOf"),
  );
  const nonNull = variants.filter((variant) => !isNullVariant(variant));
  const nullable = nonNull.length < variants.length;
  const literals = nonNull.map(literalOf);
  let merged: MutableSchema;
  if (nonNull.length > 0 && literals.every((value) => value !== undefined && typeof value !== "object")) {
    const kinds = new Set(literals.map((value) => typeof value));
    const type = kinds.size === 1 && !kinds.has("string") ? [...kinds][0] : "string";
    merged = { type, enum: literals, ...rest };
  } else {
    merged = { ...(nonNull[0] ?? {}), ...rest };
  }
  if (nullable) merged.nullable = true;
  return merged;
}

function cleanGemini(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(cleanGemini);
  if (!isSchema(value)) return value;
  const union = Array.isArray(value.anyOf)
    ? value.anyOf
    : Array.isArray(value.oneOf)
      ? value.oneOf
      : undefined;
  const source: Schema = union ? flattenUnion(value, union.filter(isSchema)) : value;
  const out: MutableSchema = {};
  for (const [key, item] of Object.entries(source)) {
    if (GEMINI_UNSUPPORTED_KEYWORDS.has(key) || key === "const") continue;
    if (key === "properties" && isSchema(item)) {
      out.properties = Object.fromEntries(
        Object.entries(item).map(([name, prop]) => [name, cleanGemini(prop)]),
      );
    } else out[key] = cleanGemini(item);
  }
  if ("const" in source && out.enum === undefined && source.const !== null) out.enum = [source.const];
  if (Array.isArray(out.type)) {
    const types = out.type.filter((type) => type !== "null");
    if (types.length < out.type.length) out.nullable = true;
    out.type = types[0] ?? "string";
  }
  if (Array.isArray(out.enum)) {
    // Gemini takes string enums only.
    out.enum = out.enum.filter((entry) => entry !== null && typeof entry !== "object").map(String);
    out.type = "string";
  }
  out.type ??= inferType(out);
  return out;
}

function strictOpenAI(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strictOpenAI);
  if (!isSchema(value)) return value;
  const out: MutableSchema = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === "~optional") continue;
    if (key === "properties" && isSchema(item)) {
      out.properties = Object.fromEntries(
        Object.entries(item).map(([name, prop]) => [name, strictOpenAI(prop)]),
      );
    } else out[key] = strictOpenAI(item);
  }
  out.type ??= inferType(out);
  if (out.type === "object") {
    const properties = isSchema(out.properties) ? (out.properties as MutableSchema) : {};
    const required = new Set(Array.isArray(value.required) ? value.required : []);
    for (const [name, prop] of Object.entries(properties)) {
      if (required.has(name) || !isSchema(prop)) continue;
      // Strict mode requires every property; an optional one becomes nullable instead.
      properties[name] =
        prop.type === undefined
          ? { anyOf: [prop, { type: "null" }] }
          : { ...prop, type: [prop.type, "null"].flat() };
    }
    out.properties = properties;
    out.required = Object.keys(properties);
    out.additionalProperties = false;
  }
  return out;
}

/** A copy of `schema` fit for the provider family; the input is left as it was. */
export function normalizeToolSchema(schema: unknown, family: SchemaFamily): unknown {
  if (family === "gemini") return cleanGemini(schema);
  if (family === "openai-strict") return strictOpenAI(schema);
  return schema;
}

/** Family for a provider id / api: Google's APIs → gemini; OpenAI's responses API → openai-strict. */
export function schemaFamilyFor(provider: string, api?: string): SchemaFamily {
  const id = provider.trim().toLowerCase();
  const kind = api?.trim().toLowerCase() ?? "";
  if (id.includes("google") || id.includes("gemini") || kind.startsWith("google")) return "gemini";
  if (id === "openai" && kind.includes("responses")) return "openai-strict";
  return "passthrough";
}

/** Paths of keywords in `schema` that the family rejects (`parameters.properties.path.minLength`). */
export function findUnsupportedSchemaKeywords(schema: unknown, path = "parameters"): string[] {
  if (Array.isArray(schema))
    return schema.flatMap((item, index) => findUnsupportedSchemaKeywords(item, `${path}[${index}]`));
  if (!isSchema(schema)) return [];
  const found: string[] = [];
  for (const [key, value] of Object.entries(schema)) {
    if (key === "properties" && isSchema(value)) {
      for (const [name, prop] of Object.entries(value))
        found.push(...findUnsupportedSchemaKeywords(prop, `${path}.properties.${name}`));
      continue;
    }
    if (GEMINI_UNSUPPORTED_KEYWORDS.has(key) || key === "anyOf" || key === "oneOf")
      found.push(`${path}.${key}`);
    if (typeof value === "object" && value !== null)
      found.push(...findUnsupportedSchemaKeywords(value, `${path}.${key}`));
  }
  return found;
}

// JSON Schema export, so editors can complete and check a config file.
// Owns: turning the zod schema into a draft 2020-12 document describing the
// file as written (input side: defaults shown, every defaulted key optional).
import { z } from "zod";
import { configSchemaNow } from "./schema-loader.ts";

export const CONFIG_SCHEMA_ID = "https://agent-kernel.dev/config.schema.json";

export function configJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(configSchemaNow(), {
    io: "input",
    target: "draft-2020-12",
    unrepresentable: "any",
  });
  return { ...schema, $id: CONFIG_SCHEMA_ID, title: "Agent Session Kernel config" };
}

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { configJsonSchema } from "./json-schema.ts";

type Node = {
  properties?: Record<string, Node>;
  additionalProperties?: unknown;
  default?: unknown;
  type?: string;
};

describe("JSON Schema export", () => {
  const schema = configJsonSchema() as Node & Record<string, unknown>;
  const at = (...keys: string[]): Node | undefined =>
    keys.reduce<Node | undefined>((node, key) => node?.properties?.[key], schema);

  it("describes the file as written: strict objects, defaults shown", () => {
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(schema.additionalProperties).toBe(false);
    expect(at("agents", "defaults")?.additionalProperties).toBe(false);
    expect(at("agents", "defaults", "timeoutSeconds")?.default).toBe(172_800);
    expect(at("messages", "queue", "mode")?.default).toBe("steer");
    expect(Object.keys(schema.properties ?? {})).toEqual(
      expect.arrayContaining([
        "agents",
        "tools",
        "auth",
        "session",
        "messages",
        "channels",
        "bindings",
        "cron",
      ]),
    );
  });

  it("is checked in, up to date (regenerate with `tooling/pnpm config:schema`)", () => {
    const file = join(import.meta.dirname, "..", "config.schema.json");
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(schema);
  });
});

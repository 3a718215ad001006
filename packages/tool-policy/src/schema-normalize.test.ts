import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@earendil-works/pi-ai";
import {
  createBashToolDefinition,
  createEditToolDefinition,
  createFindToolDefinition,
  createGrepToolDefinition,
  createReadToolDefinition,
  createWriteToolDefinition,
} from "@earendil-works/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";
import { findUnsupportedSchemaKeywords, normalizeToolSchema, schemaFamilyFor } from "./schema-normalize.ts";

const dir = mkdtempSync(join(tmpdir(), "tool-schema-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const piTools = [
  createReadToolDefinition(dir),
  createWriteToolDefinition(dir),
  createEditToolDefinition(dir),
  createBashToolDefinition(dir),
  createGrepToolDefinition(dir),
  createFindToolDefinition(dir),
];
const plain = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

describe("normalizeToolSchema on pi's real tool schemas", () => {
  it.each(piTools.map((tool) => [tool.name, tool.parameters] as const))(
    "%s: Gemini gets no unsupported keyword and the input is untouched",
    (_name, parameters) => {
      const before = plain(parameters);
      const gemini = normalizeToolSchema(parameters, "gemini");
      expect(findUnsupportedSchemaKeywords(gemini)).toEqual([]);
      expect(plain(parameters)).toEqual(before);
      expect(gemini).toMatchObject({ type: "object" });
    },
  );

  it.each(piTools.map((tool) => [tool.name, tool.parameters] as const))(
    "%s: OpenAI strict requires every property and forbids extras",
    (_name, parameters) => {
      const strict = normalizeToolSchema(parameters, "openai-strict") as {
        properties: Record<string, { type?: unknown }>;
        required: string[];
        additionalProperties: boolean;
      };
      expect(strict.required.sort()).toEqual(Object.keys(strict.properties).sort());
      expect(strict.additionalProperties).toBe(false);
      const original = parameters as { required?: string[]; properties: Record<string, unknown> };
      for (const name of Object.keys(original.properties)) {
        if (original.required?.includes(name)) continue;
        expect(JSON.stringify(strict.properties[name])).toContain('"null"');
      }
    },
  );
});

describe("Gemini quirks on TypeBox schemas", () => {
  it("flattens literal unions into a string enum and null variants into nullable", () => {
    const schema = Type.Object({
      mode: Type.Union([Type.Literal("fast"), Type.Literal("slow")], { description: "speed" }),
      level: Type.Union([Type.Literal(1), Type.Literal(2)]),
      maybe: Type.Union([Type.String({ minLength: 2 }), Type.Null()]),
    });
    expect(normalizeToolSchema(schema, "gemini")).toEqual({
      type: "object",
      required: ["mode", "level", "maybe"],
      properties: {
        mode: { type: "string", enum: ["fast", "slow"], description: "speed" },
        level: { type: "string", enum: ["1", "2"] },
        maybe: { type: "string", nullable: true },
      },
    });
  });

  it("infers a missing type", () => {
    expect(normalizeToolSchema({ properties: { a: { enum: ["x"] }, b: { items: {} } } }, "gemini")).toEqual({
      type: "object",
      properties: { a: { type: "string", enum: ["x"] }, b: { type: "array", items: {} } },
    });
  });
});

describe("schemaFamilyFor", () => {
  it("maps providers and apis", () => {
    expect(schemaFamilyFor("google", "google-generative-ai")).toBe("gemini");
    expect(schemaFamilyFor("openai", "openai-responses")).toBe("openai-strict");
    expect(schemaFamilyFor("anthropic", "anthropic-messages")).toBe("passthrough");
  });
});

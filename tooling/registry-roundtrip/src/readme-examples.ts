// The examples a README promises, taken from the README itself so that what a reader copies is what the
// round trip runs. Owns: finding each ```ts block marked `<!-- example: name -->` (the comment on the line
// before the fence, blank lines allowed between) and turning it into plain JavaScript for the `.mjs` run.
// Does not own: running or typechecking them (consumer.ts).
import { readFileSync } from "node:fs";
import { stripTypeScriptTypes } from "node:module";

export interface ReadmeExample {
  /** The name after `example:`, unique in its README. */
  readonly name: string;
  /** The code as the README shows it (TypeScript). */
  readonly code: string;
}

const MARKER = /^<!--\s*example:\s*([a-z0-9-]+)\s*-->\s*$/;

/** Every marked example of the README at `path`; an error for a marker without a ```ts block after it. */
export function readmeExamples(path: string): ReadmeExample[] {
  const lines = readFileSync(path, "utf8").split("\n");
  const examples: ReadmeExample[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const name = MARKER.exec(lines[index] ?? "")?.[1];
    if (name === undefined) continue;
    let start = index + 1;
    while (lines[start]?.trim() === "") start += 1;
    if (!/^```ts\s*$/.test(lines[start] ?? "")) {
      throw new Error(`${path}:${index + 1}: example "${name}" is not followed by a \`\`\`ts block`);
    }
    const end = lines.findIndex((line, at) => at > start && /^```\s*$/.test(line));
    if (end === -1) throw new Error(`${path}:${start + 1}: example "${name}" has no closing fence`);
    if (examples.some((example) => example.name === name)) {
      throw new Error(`${path}:${index + 1}: a second example named "${name}"`);
    }
    examples.push({ name, code: `${lines.slice(start + 1, end).join("\n")}\n` });
    index = end;
  }
  return examples;
}

/** The example as JavaScript: types erased (the examples use erasable syntax only, as the packages do). */
export function toJavaScript(code: string): string {
  return stripTypeScriptTypes(code, { mode: "strip" });
}

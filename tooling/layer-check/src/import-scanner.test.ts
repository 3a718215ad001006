// Tests of reading import specifiers out of source text: every import form,
// and the text that only looks like one (comments, strings, templates,
// regular expressions). Does not own what a specifier may be.
import { describe, expect, test } from "vitest";
import { findImports } from "./import-scanner.ts";

const specifiers = (source: string): string[] => findImports(source).map((site) => site.specifier);

describe("findImports", () => {
  test("static imports in every clause shape", () => {
    const source = [
      'import a from "default";',
      'import * as b from "namespace";',
      'import c, { d as e } from "mixed";',
      'import type { F } from "type-only";',
      'import { type G, h } from "inline-type";',
      'import i, * as j from "default-and-namespace";',
      'import k from "attributes" with { type: "json" };',
      'import { "string name" as l } from "string-name";',
    ].join("\n");
    expect(findImports(source)).toEqual([
      { specifier: "default", line: 1, kind: "import" },
      { specifier: "namespace", line: 2, kind: "import" },
      { specifier: "mixed", line: 3, kind: "import" },
      { specifier: "type-only", line: 4, kind: "import" },
      { specifier: "inline-type", line: 5, kind: "import" },
      { specifier: "default-and-namespace", line: 6, kind: "import" },
      { specifier: "attributes", line: 7, kind: "import" },
      { specifier: "string-name", line: 8, kind: "import" },
    ]);
  });

  test("side-effect imports, re-exports, dynamic imports and require", () => {
    const source = [
      "import 'side-effect'",
      'export * from "star";',
      'export * as ns from "star-as";',
      'export { a, b as c } from "named";',
      'export type { T } from "type-named";',
      'export type * from "type-star";',
      'const lazy = await import("dynamic");',
      "type Lazy = typeof import('type-query');",
      'const cjs = require("required");',
      'import legacy = require("import-equals");',
    ].join("\n");
    expect(findImports(source).map(({ specifier, kind }) => `${kind} ${specifier}`)).toEqual([
      "side-effect side-effect",
      "re-export star",
      "re-export star-as",
      "re-export named",
      "re-export type-named",
      "re-export type-star",
      "dynamic dynamic",
      "dynamic type-query",
      "require required",
      "require import-equals",
    ]);
  });

  test("a multi-line import list reports the line of its specifier", () => {
    const source = 'const x = 1;\nimport {\n  a,\n  b,\n} from "multi";\n';
    expect(findImports(source)).toEqual([{ specifier: "multi", line: 5, kind: "import" }]);
  });

  test("imports without semicolons, one after another", () => {
    const source = 'import a from "one"\nimport { b } from "two"\nexport { c }\nimport "three"\n';
    expect(specifiers(source)).toEqual(["one", "two", "three"]);
  });

  test("commented-out imports are ignored", () => {
    const source = [
      '// import a from "line-comment";',
      '/* import b from "block-comment"; */',
      "/**",
      ' * import c from "doc-comment";',
      ' * require("doc-require")',
      " */",
      'import d from "real"; // import e from "trailing"',
    ].join("\n");
    expect(findImports(source)).toEqual([{ specifier: "real", line: 7, kind: "import" }]);
  });

  test("imports mentioned inside strings, templates and regular expressions are ignored", () => {
    const source = [
      "const single = 'import a from \"single\"';",
      'const double = "export * from \\"double\\"";',
      'const template = `import b from "template" ${1 + 1} require("in-template")`;',
      'const regex = /import\\("regex"\\)/g;',
      'const slashes = 4 / 2 / 1; import c from "after-division";',
      'const word = "import"; const from = "from";',
    ].join("\n");
    expect(specifiers(source)).toEqual(["after-division"]);
  });

  test("code inside template substitutions is still read", () => {
    const source =
      'const t = `prefix ${await import("inside")} middle ${`nested ${x}`} suffix`;\nimport "after";';
    expect(findImports(source)).toEqual([
      { specifier: "inside", line: 1, kind: "dynamic" },
      { specifier: "after", line: 2, kind: "side-effect" },
    ]);
  });

  test("line numbers count newlines inside comments, strings and templates", () => {
    const source = '/*\n\n*/\nconst t = `a\nb`;\nimport "fourth";\n';
    expect(findImports(source)).toEqual([{ specifier: "fourth", line: 6, kind: "side-effect" }]);
  });

  test("look-alikes that are not imports", () => {
    const source = [
      "const meta = import.meta.url;",
      'obj.import("method");',
      'obj.require("method");',
      "const variable = import(name);",
      "const options = { import: 1, from: 2 };",
      'require.resolve("resolve-only");',
      "export { a, b };",
      "export const from = 1;",
      'declare module "ambient" {}',
    ].join("\n");
    expect(specifiers(source)).toEqual([]);
  });

  test("a hashbang line is skipped", () => {
    expect(findImports('#!/usr/bin/env node\nimport "x";')).toEqual([
      { specifier: "x", line: 2, kind: "side-effect" },
    ]);
  });
});

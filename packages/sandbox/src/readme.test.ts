// The README's example, run exactly as written (its import pointed at this package's source).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";

it("the README example runs and prints what it says", () => {
  const readme = readFileSync(join(import.meta.dirname, "..", "README.md"), "utf8");
  const example = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(example).toBeDefined();
  const script = (example ?? "").replace(
    '"@agent-kernel/sandbox"',
    JSON.stringify(join(import.meta.dirname, "index.ts")),
  );
  const file = join(mkdtempSync(join(tmpdir(), "sandbox-readme-")), "example.ts");
  writeFileSync(file, script);
  const output = execFileSync(process.execPath, [file], {
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });
  expect(output).toMatch(/^hello from sandbox in \/workspace\n/);
  expect(output).toMatch(/\bworkspace\b[\s\S]* 0\n$/);
  expect(output).not.toContain("sk-never-shown");
});

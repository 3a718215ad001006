// apply_patch: the Codex patch format parsed and applied, on the host (real files, links that leave the
// workspace refused) and inside a real bubblewrap sandbox; every failure — a bad path, a chunk that does not
// match, an add over an existing file — leaves every file as it was.
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBwrapEngine, type SandboxEngine } from "@agent-kernel/sandbox";
import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { applyChunks, PatchError, parsePatch } from "./apply-patch-format.ts";
import { buildDefaultTools } from "./default-tools.ts";
import type { ToolSandbox } from "./tool-sandbox.ts";

let base: string;
let ws: string;
let outside: string;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "apply-patch-"));
  ws = join(base, "ws");
  outside = join(base, "outside");
  mkdirSync(ws);
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.txt"), "secret\n");
});
afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

function patchTool(sandbox?: ToolSandbox): ToolDefinition {
  const tool = buildDefaultTools({ workspaceDir: ws, agentId: "a", store: {} as never, sandbox }).find(
    (candidate) => candidate.name === "apply_patch",
  );
  if (!tool) throw new Error("no apply_patch tool");
  return tool;
}

async function apply(input: string, sandbox?: ToolSandbox): Promise<string> {
  const result = await patchTool(sandbox).execute(
    "p",
    { input } as never,
    undefined,
    undefined,
    undefined as never,
  );
  return result.content.map((block) => (block.type === "text" ? block.text : "")).join("");
}

const patch = (...lines: string[]): string => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n");

describe("the patch format", () => {
  it("parses add, delete, update with move, several chunks and end of file", () => {
    const operations = parsePatch(
      patch(
        "*** Add File: a.txt",
        "+one",
        "+two",
        "*** Delete File: gone.txt",
        "*** Update File: src/x.ts",
        "*** Move to: src/y.ts",
        "@@ function f() {",
        " keep",
        "-old",
        "+new",
        "@@",
        "+tail",
        "*** End of File",
      ),
    );
    expect(operations).toEqual([
      { kind: "add", path: "a.txt", content: "one\ntwo\n" },
      { kind: "delete", path: "gone.txt" },
      {
        kind: "update",
        path: "src/x.ts",
        moveTo: "src/y.ts",
        chunks: [
          {
            context: "function f() {",
            oldLines: ["keep", "old"],
            newLines: ["keep", "new"],
            endOfFile: false,
          },
          { context: undefined, oldLines: [], newLines: ["tail"], endOfFile: true },
        ],
      },
    ]);
  });

  it("names what is wrong", () => {
    expect(() => parsePatch("*** Update File: a\n*** End Patch")).toThrow(
      /first line of the patch must be "\*\*\* Begin Patch"/,
    );
    expect(() => parsePatch("*** Begin Patch\n*** Delete File: a")).toThrow(
      /last line .* "\*\*\* End Patch"/,
    );
    expect(() => parsePatch(patch("*** Update File: a.txt"))).toThrow(/the update of "a.txt" has no chunks/);
    expect(() => parsePatch(patch("*** Update File: a.txt", "@@", "?what"))).toThrow(
      /line 4: "\?what" is not a patch line/,
    );
    expect(() => parsePatch(patch("*** Rename File: a"))).toThrow(/is not a file header/);
    expect(() => parsePatch(patch())).toThrow(/no file operations/);
    expect(() => parsePatch(patch("*** Delete File: a")).at(0)).not.toThrow();
    // A heredoc wrapper copied from a shell example is tolerated.
    expect(parsePatch(`<<'EOF'\n${patch("*** Delete File: a")}\nEOF`)).toEqual([
      { kind: "delete", path: "a" },
    ]);
  });

  it("applies chunks in order, loosely on whitespace and Unicode punctuation, and says what it did not find", () => {
    const text = "a\nb\nc\nd\nb\ne\n";
    const [update] = parsePatch(patch("*** Update File: f", "@@ d", "-b", "+B"));
    if (update?.kind !== "update") throw new Error("expected an update");
    expect(applyChunks(text, update.chunks, "f")).toBe("a\nb\nc\nd\nB\ne\n");
    expect(
      applyChunks(
        "x = “quoted” — dash  \n",
        [{ oldLines: ['x = "quoted" - dash'], newLines: ["y"], endOfFile: false }],
        "f",
      ),
    ).toBe("y\n");
    expect(applyChunks("no newline", [{ oldLines: [], newLines: ["added"], endOfFile: true }], "f")).toBe(
      "no newline\nadded\n",
    );
    expect(() => applyChunks(text, [{ oldLines: ["zzz"], newLines: [], endOfFile: false }], "f")).toThrow(
      new PatchError("could not find these lines in f:\nzzz"),
    );
    expect(() =>
      applyChunks(text, [{ context: "nope", oldLines: ["a"], newLines: [], endOfFile: false }], "f"),
    ).toThrow(/could not find the context line "nope" in f/);
  });
});

describe("apply_patch on the host", () => {
  it("adds, updates, moves and deletes files, reporting each", async () => {
    writeFileSync(join(ws, "app.ts"), "const a = 1;\nconst b = 2;\nconst c = 3;\n");
    writeFileSync(join(ws, "old.ts"), "export const x = 1;\n");
    writeFileSync(join(ws, "obsolete.txt"), "bye\n");
    const out = await apply(
      patch(
        "*** Add File: docs/new.md",
        "+# New",
        "*** Update File: app.ts",
        "@@",
        " const a = 1;",
        "-const b = 2;",
        "+const b = 20;",
        " const c = 3;",
        "*** Update File: old.ts",
        "*** Move to: lib/renamed.ts",
        "@@",
        "-export const x = 1;",
        "+export const x = 2;",
        "*** Delete File: obsolete.txt",
      ),
    );
    expect(out).toBe(
      `Success. Updated the following files:\nA ${ws}/docs/new.md\nM ${ws}/app.ts\nM ${ws}/lib/renamed.ts\nD ${ws}/obsolete.txt`,
    );
    expect(readFileSync(join(ws, "docs/new.md"), "utf8")).toBe("# New\n");
    expect(readFileSync(join(ws, "app.ts"), "utf8")).toBe("const a = 1;\nconst b = 20;\nconst c = 3;\n");
    expect(readFileSync(join(ws, "lib/renamed.ts"), "utf8")).toBe("export const x = 2;\n");
    expect(existsSync(join(ws, "old.ts"))).toBe(false);
    expect(existsSync(join(ws, "obsolete.txt"))).toBe(false);
  });

  it("is atomic: a chunk that does not match, a path outside or an add over a file changes no file", async () => {
    writeFileSync(join(ws, "one.txt"), "one\n");
    writeFileSync(join(ws, "two.txt"), "two\n");
    const snapshot = () => [
      readFileSync(join(ws, "one.txt"), "utf8"),
      readFileSync(join(ws, "two.txt"), "utf8"),
    ];
    const failing = [
      // The second file's chunk does not match: the first file's change is not written either.
      [
        patch(
          "*** Update File: one.txt",
          "@@",
          "-one",
          "+ONE",
          "*** Update File: two.txt",
          "@@",
          "-zwei",
          "+TWO",
        ),
        /could not find these lines in .*two\.txt:\nzwei/,
      ],
      [
        patch("*** Update File: one.txt", "@@", "-one", "+ONE", "*** Add File: ../escape.txt", "+x"),
        /outside the workspace/,
      ],
      [
        patch("*** Delete File: one.txt", "*** Add File: two.txt", "+x"),
        /cannot add .*two\.txt: it already exists/,
      ],
      [
        patch("*** Update File: one.txt", "@@", "-one", "+ONE", "*** Delete File: missing.txt"),
        /cannot delete .*missing\.txt: there is no such file/,
      ],
      [
        patch("*** Update File: one.txt", "*** Move to: two.txt", "@@", "-one", "+ONE"),
        /cannot move .* it already exists/,
      ],
    ] as const;
    for (const [input, message] of failing) {
      await expect(apply(input)).rejects.toThrow(message);
      expect(snapshot()).toEqual(["one\n", "two\n"]);
      expect(existsSync(join(base, "escape.txt"))).toBe(false);
    }
    // Deleting first makes the add a replacement.
    await apply(patch("*** Delete File: two.txt", "*** Add File: two.txt", "+new two"));
    expect(readFileSync(join(ws, "two.txt"), "utf8")).toBe("new two\n");
  });

  it("refuses links that leave the workspace, ~ and absolute paths outside", async () => {
    symlinkSync(join(outside, "secret.txt"), join(ws, "link.txt"));
    symlinkSync(outside, join(ws, "dirlink"));
    await expect(apply(patch("*** Update File: link.txt", "@@", "-secret", "+pwned"))).rejects.toThrow(
      /symbolic link/,
    );
    await expect(apply(patch("*** Add File: dirlink/planted.txt", "+x"))).rejects.toThrow(/symbolic link/);
    await expect(apply(patch("*** Delete File: link.txt"))).rejects.toThrow(/symbolic link/);
    await expect(apply(patch(`*** Delete File: ${join(outside, "secret.txt")}`))).rejects.toThrow(
      /outside the workspace/,
    );
    await expect(apply(patch("*** Add File: ~/x", "+x"))).rejects.toThrow(/home directory/);
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("secret\n");
    expect(existsSync(join(outside, "planted.txt"))).toBe(false);
  });
});

const engine: SandboxEngine = createBwrapEngine();
let bwrapProblem: string | undefined;
beforeAll(async () => {
  const status = await engine.probe();
  bwrapProblem = status.available ? undefined : status.problem;
});

describe("apply_patch in a sandboxed session", () => {
  beforeEach((context) => {
    if (bwrapProblem !== undefined) context.skip(`bwrap cannot run here: ${bwrapProblem}`);
    // The bwrap engine refuses a root-owned workspace: a root gateway gives it to the sandbox's user.
    if (process.getuid?.() === 0) chownSync(ws, 65534, 65534);
  });

  const sandbox = (): ToolSandbox => ({
    sandboxed: true,
    engine,
    cwd: "/workspace",
    mounts: [{ path: "/workspace", hostPath: ws, writable: true }],
    network: false,
    limits: {
      timeoutMs: 10_000,
      maxOutputBytes: 64 * 1024,
      memoryBytes: 512 * 1024 * 1024,
      maxProcesses: 64,
      maxFileBytes: 64 * 1024 * 1024,
      tmpBytes: 16 * 1024 * 1024,
    },
    env: {},
  });

  it("adds, updates and deletes inside the sandbox, named by their paths in it; a failure changes nothing", async () => {
    const out = await apply(
      patch("*** Add File: notes/a.txt", "+alpha", "*** Add File: b.txt", "+beta"),
      sandbox(),
    );
    expect(out).toBe("Success. Updated the following files:\nA /workspace/notes/a.txt\nA /workspace/b.txt");
    expect(readFileSync(join(ws, "notes/a.txt"), "utf8")).toBe("alpha\n");
    await expect(
      apply(
        patch(
          "*** Update File: b.txt",
          "@@",
          "-beta",
          "+BETA",
          "*** Update File: notes/a.txt",
          "@@",
          "-nope",
          "+x",
        ),
        sandbox(),
      ),
    ).rejects.toThrow(/could not find these lines in \/workspace\/notes\/a\.txt/);
    expect(readFileSync(join(ws, "b.txt"), "utf8")).toBe("beta\n");
    await apply(
      patch("*** Update File: b.txt", "@@", "-beta", "+BETA", "*** Delete File: notes/a.txt"),
      sandbox(),
    );
    expect(readFileSync(join(ws, "b.txt"), "utf8")).toBe("BETA\n");
    expect(existsSync(join(ws, "notes/a.txt"))).toBe(false);
    await expect(apply(patch("*** Add File: ../etc/x", "+x"), sandbox())).rejects.toThrow(
      /outside the workspace/,
    );
  });
});

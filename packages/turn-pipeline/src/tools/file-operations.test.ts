// The file tools where the session's commands run: inside the sandbox (real bubblewrap) for a sandboxed
// session, on the host otherwise. Regressions of the security review: a racing `exec` swapping a directory for
// a link to a host directory must not make `write` land, nor `read` leak, outside the view; a FIFO named by
// write/edit/read must fail cleanly (at once on the host, within the wall time in a sandbox) and never tie up
// the gateway's threadpool.
import { execFileSync } from "node:child_process";
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBwrapEngine, type SandboxEngine, type SandboxLimits } from "@agent-kernel/sandbox";
import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildDefaultTools } from "./default-tools.ts";
import {
  hostEditOperations,
  hostWriteOperations,
  locateInView,
  MAX_EDIT_FILE_BYTES,
  sandboxReadSource,
  shellQuote,
} from "./file-operations.ts";
import type { PathView } from "./path-view.ts";
import { createBoundedReadTool } from "./read-tool.ts";
import type { ToolSandbox } from "./tool-sandbox.ts";

/** The host user a root gateway's sandboxes run as (the bwrap engine refuses a root-owned workspace). */
const SANDBOX_OWNER = 65534;
const asRoot = process.getuid?.() === 0;

/** Gives a path made by the test to the sandbox's user, as the kernel does with a sandbox workspace. */
function giveToSandbox(...paths: string[]): void {
  if (!asRoot) return;
  for (const path of paths) chownSync(path, SANDBOX_OWNER, SANDBOX_OWNER);
}

const LIMITS: SandboxLimits = {
  timeoutMs: 4_000,
  maxOutputBytes: 64 * 1024,
  memoryBytes: 512 * 1024 * 1024,
  maxProcesses: 64,
  maxFileBytes: 64 * 1024 * 1024,
  tmpBytes: 16 * 1024 * 1024,
};

let base: string;
let ws: string;
let agentDir: string;
let outside: string;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "file-ops-"));
  ws = join(base, "ws");
  agentDir = join(base, "agent");
  outside = join(base, "outside");
  for (const dir of [ws, agentDir, outside]) mkdirSync(dir);
  writeFileSync(join(agentDir, "notes.md"), "agent notes\n");
  writeFileSync(join(outside, "secret.txt"), "sk-live-SECRET-123\n", { mode: 0o600 });
  giveToSandbox(ws);
});
afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

function toolsOf(sandbox: ToolSandbox | undefined): Map<string, ToolDefinition> {
  const list = buildDefaultTools({ workspaceDir: ws, agentId: "a", store: {} as never, sandbox });
  return new Map(list.map((tool) => [tool.name, tool]));
}

async function call(tools: Map<string, ToolDefinition>, name: string, params: object): Promise<string> {
  const tool = tools.get(name);
  if (!tool) throw new Error(`no tool ${name}`);
  const result = await tool.execute("call", params as never, undefined, undefined, undefined as never);
  return result.content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("");
}

/** The call's text or its error's message, and how long it took. */
async function settle(
  tools: Map<string, ToolDefinition>,
  name: string,
  params: object,
): Promise<{ readonly text: string; readonly ms: number }> {
  const started = performance.now();
  const text = await call(tools, name, params).then(
    (value) => `ok: ${value}`,
    (error: Error) => `error: ${error.message}`,
  );
  return { text, ms: performance.now() - started };
}

describe("locateInView and shellQuote", () => {
  const view: PathView = {
    cwd: "/workspace",
    mounts: [
      { path: "/workspace", hostPath: "/host/ws", writable: true },
      { path: "/agent", hostPath: "/host/agent", writable: false },
    ],
  };

  it("place a path in the view by its spelling alone", () => {
    expect(locateInView(view, "a/../b.txt", "write").viewPath).toBe("/workspace/b.txt");
    expect(locateInView(view, "../agent/notes.md", "read").viewPath).toBe("/agent/notes.md");
    expect(() => locateInView(view, "../etc/passwd", "read")).toThrow(/outside the workspace/);
    expect(() => locateInView(view, "/host/ws/x", "read")).toThrow(/outside the workspace/);
    expect(() => locateInView(view, "/agent/x", "write")).toThrow(/\/agent, which is read-only/);
    expect(() => locateInView(view, "~/.ssh/id_rsa", "read")).toThrow(/home directory/);
    expect(() => locateInView(view, " ", "read")).toThrow(/empty/);
    expect(() => locateInView(view, "a\u0000b", "read")).toThrow(/NUL/);
  });

  it("quotes any text as one shell word", () => {
    const words = ["plain", "with space", "it's", "'", "new\nline", "-n", "$(id)", "`id`", '"', "\\", ""];
    const echoed = execFileSync("bash", ["-c", `printf '%s\\0' ${words.map(shellQuote).join(" ")}`]);
    expect(echoed.toString("utf8").split("\u0000").slice(0, -1)).toEqual(words);
  });
});

describe("unsandboxed: the host, with no FIFO, device or last-component link ever opened", () => {
  it("write, edit and read of FIFOs fail at once and leave the threadpool free", async () => {
    const tools = toolsOf(undefined);
    for (const name of ["p1", "p2", "p3", "p4", "p5", "p6"]) execFileSync("mkfifo", [join(ws, name)]);
    const results = await Promise.all([
      settle(tools, "write", { path: "p1", content: "x" }),
      settle(tools, "write", { path: "p2", content: "x" }),
      settle(tools, "edit", { path: "p3", edits: [{ oldText: "a", newText: "b" }] }),
      settle(tools, "edit", { path: "p4", edits: [{ oldText: "a", newText: "b" }] }),
      settle(tools, "read", { path: "p5" }),
      settle(tools, "read", { path: "p6" }),
    ]);
    for (const result of results) {
      expect(result.text).toMatch(/^error: .*named pipe, not a file/);
      expect(result.ms).toBeLessThan(2_000);
    }
    // Four calls blocked in open() would have taken every libuv thread: the gateway's own reads would wait.
    const started = performance.now();
    await readFile(join(agentDir, "notes.md"));
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("the host operations refuse a link at the last component, a device and a FIFO without opening them", async () => {
    const write = hostWriteOperations();
    const edit = hostEditOperations();
    symlinkSync(join(outside, "secret.txt"), join(ws, "planted"));
    await expect(write.writeFile(join(ws, "planted"), "owned")).rejects.toThrow(/symbolic link/);
    await expect(edit.access(join(ws, "planted"))).rejects.toThrow(/symbolic link/);
    await expect(edit.readFile(join(ws, "planted"))).rejects.toThrow(/symbolic link/);
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("sk-live-SECRET-123\n");
    await expect(write.writeFile("/dev/null", "x")).rejects.toThrow('"/dev/null" is a device, not a file');
    await expect(edit.readFile("/dev/zero")).rejects.toThrow(/is a device/);
    execFileSync("mkfifo", [join(ws, "fifo")]);
    await expect(write.writeFile(join(ws, "fifo"), "x")).rejects.toThrow(/named pipe/);
    await expect(edit.access(join(ws, "fifo"))).rejects.toThrow(/named pipe/);
    await expect(edit.access(join(ws, "missing"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("write and edit still work, and edit refuses a file too large to load", async () => {
    const tools = toolsOf(undefined);
    expect(await call(tools, "write", { path: "a/b.txt", content: "one two" })).toMatch(/Successfully wrote/);
    await call(tools, "edit", { path: "a/b.txt", edits: [{ oldText: "two", newText: "three" }] });
    expect(readFileSync(join(ws, "a/b.txt"), "utf8")).toBe("one three");
    await call(tools, "write", { path: "a/b.txt", content: "short" });
    expect(readFileSync(join(ws, "a/b.txt"), "utf8")).toBe("short");
    writeFileSync(join(ws, "big.txt"), Buffer.alloc(MAX_EDIT_FILE_BYTES + 1, 0x61));
    await expect(
      call(tools, "edit", { path: "big.txt", edits: [{ oldText: "a", newText: "b" }] }),
    ).rejects.toThrow(/larger than the 10.0MB edit loads/);
  });
});

const engine: SandboxEngine = createBwrapEngine();
let bwrapProblem: string | undefined;
beforeAll(async () => {
  const status = await engine.probe();
  bwrapProblem = status.available ? undefined : status.problem;
});

function sandboxOf(limits: Partial<SandboxLimits> = {}, runEngine: SandboxEngine = engine): ToolSandbox {
  return {
    sandboxed: true,
    engine: runEngine,
    cwd: "/workspace",
    mounts: [
      { path: "/workspace", hostPath: ws, writable: true },
      { path: "/agent", hostPath: agentDir, writable: false },
    ],
    network: false,
    limits: { ...LIMITS, ...limits },
    env: {},
  };
}

const sandboxView = (sandbox: ToolSandbox): PathView => ({ cwd: sandbox.cwd, mounts: sandbox.mounts });

describe("sandboxed: the file tools run inside the sandbox", () => {
  beforeEach((context) => {
    if (bwrapProblem !== undefined) context.skip(`bwrap cannot run here: ${bwrapProblem}`);
  });

  it("writes paths with spaces, quotes, newlines, leading dashes and shell syntax, which exec then sees", async () => {
    const tools = toolsOf(sandboxOf());
    const names = [
      "with space.txt",
      `it's "quoted".txt`,
      "new\nline.txt",
      "trailing newline\n",
      "-n",
      "--",
      "-rf *",
      "$(touch pwned).txt",
      "`touch pwned2`;x.txt",
      "a'; touch pwned3; '.txt",
      "nested dir/-deeper/ü ñ.txt",
    ];
    for (const name of names) {
      const written = await call(tools, "write", { path: name, content: `content of ${name}\n` });
      expect(written).toBe(`Successfully wrote to /workspace/${name}`);
      expect(readFileSync(join(ws, name), "utf8")).toBe(`content of ${name}\n`);
      expect(await call(tools, "read", { path: name })).toBe(`content of ${name}\n`);
    }
    const listed = await call(tools, "exec", {
      command: `cat -- ${shellQuote("/workspace/with space.txt")} ./-n ${shellQuote("new\nline.txt")}`,
    });
    expect(listed).toBe("content of with space.txt\ncontent of -n\ncontent of new\nline.txt\n");
    expect(readdirSync(ws).filter((name) => name.startsWith("pwned"))).toEqual([]);
    expect(existsSync(join(ws, "pwned"))).toBe(false);
    // The file is the sandbox user's, made inside, not a host file of the gateway's user.
    expect(await call(tools, "exec", { command: `stat -c %U ${shellQuote("with space.txt")}` })).toBe(
      "sandbox\n",
    );
  });

  it("edits inside the sandbox, and exec sees the change", async () => {
    const tools = toolsOf(sandboxOf());
    await call(tools, "exec", { command: "printf 'alpha\\nbeta\\ngamma\\n' > list.txt" });
    const edited = await call(tools, "edit", {
      path: "list.txt",
      edits: [
        { oldText: "beta", newText: "BETA" },
        { oldText: "gamma", newText: "delta" },
      ],
    });
    expect(edited).toBe("Successfully replaced 2 block(s) in /workspace/list.txt.");
    expect(await call(tools, "exec", { command: "cat list.txt" })).toBe("alpha\nBETA\ndelta\n");
    await expect(
      call(tools, "edit", { path: "missing.txt", edits: [{ oldText: "a", newText: "b" }] }),
    ).rejects.toThrow("Could not edit file: /workspace/missing.txt. Error code: ENOENT.");
    await expect(
      call(tools, "edit", { path: "/agent/notes.md", edits: [{ oldText: "agent", newText: "x" }] }),
    ).rejects.toThrow(/\/agent, which is read-only/);
    // Reads see the read-only mount.
    expect(await call(tools, "read", { path: "../agent/notes.md" })).toBe("agent notes\n");
  });

  it("leaves links to the kernel inside: into a read-only mount refused, to a host path leads nowhere", async () => {
    // The sandbox's user owns the agent files: only the mount being read-only stands in the way.
    giveToSandbox(agentDir, join(agentDir, "notes.md"));
    const tools = toolsOf(sandboxOf());
    await call(tools, "exec", { command: "ln -s /agent/notes.md to-agent && ln -s /agent to-agent-dir" });
    await expect(call(tools, "write", { path: "to-agent", content: "x" })).rejects.toThrow(
      /cannot write "\/workspace\/to-agent": Read-only file system/,
    );
    await expect(call(tools, "write", { path: "to-agent-dir/new.md", content: "x" })).rejects.toThrow(
      /Read-only file system/,
    );
    await expect(
      call(tools, "edit", { path: "to-agent", edits: [{ oldText: "agent", newText: "x" }] }),
    ).rejects.toThrow("Could not edit file: /workspace/to-agent. Error code: EROFS.");
    expect(readFileSync(join(agentDir, "notes.md"), "utf8")).toBe("agent notes\n");
    expect(readdirSync(agentDir)).toEqual(["notes.md"]);
    // A link the host would follow out of the workspace: inside, its target does not exist.
    symlinkSync(outside, join(ws, "host-link"));
    symlinkSync(join(outside, "secret.txt"), join(ws, "secret-link"));
    await expect(call(tools, "read", { path: "secret-link" })).rejects.toThrow(/does not exist/);
    await expect(call(tools, "read", { path: "host-link/secret.txt" })).rejects.toThrow(/does not exist/);
    await expect(call(tools, "write", { path: "host-link/planted.txt", content: "x" })).rejects.toThrow(
      /cannot (write|create)/,
    );
    await expect(call(tools, "write", { path: "secret-link", content: "x" })).rejects.toThrow(/cannot write/);
    expect(readdirSync(outside)).toEqual(["secret.txt"]);
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("sk-live-SECRET-123\n");
  });

  it("refuses a FIFO, a directory and a device by what the sandbox sees, at once", async () => {
    const tools = toolsOf(sandboxOf());
    await call(tools, "exec", { command: "mkfifo fifo && mkdir folder && ln -s /dev/zero zero" });
    const results = await Promise.all([
      settle(tools, "write", { path: "fifo", content: "x" }),
      settle(tools, "edit", { path: "fifo", edits: [{ oldText: "a", newText: "b" }] }),
      settle(tools, "read", { path: "fifo" }),
    ]);
    expect(results.map((result) => result.text)).toEqual([
      'error: "/workspace/fifo" is a named pipe, not a file',
      'error: Could not edit file: /workspace/fifo. Error: "/workspace/fifo" is a named pipe, not a file.',
      'error: "fifo" is a named pipe, not a file',
    ]);
    for (const result of results) expect(result.ms).toBeLessThan(LIMITS.timeoutMs);
    await expect(call(tools, "read", { path: "folder" })).rejects.toThrow(
      '"folder" is a directory, not a file',
    );
    await expect(call(tools, "write", { path: "folder", content: "x" })).rejects.toThrow(/is a directory/);
    await expect(call(tools, "read", { path: "zero" })).rejects.toThrow('"zero" is a device, not a file');
    await expect(call(tools, "write", { path: "zero", content: "x" })).rejects.toThrow(/is a device/);
    await expect(call(tools, "read", { path: "nothing.txt" })).rejects.toThrow(
      'file "nothing.txt" does not exist',
    );
    await call(tools, "exec", { command: "mkdir locked && echo s > locked/f && chmod 000 locked" });
    await expect(call(tools, "read", { path: "locked/f" })).rejects.toThrow(
      'cannot read "locked/f": Permission denied',
    );
    await expect(call(tools, "write", { path: "locked/f", content: "x" })).rejects.toThrow(
      /Permission denied/,
    );
    await call(tools, "exec", { command: "chmod 700 locked" });
  });

  it("a FIFO swapped in behind the checks fails within the wall time, never hangs", async () => {
    const timeoutMs = 2_500;
    const tools = toolsOf(sandboxOf({ timeoutMs }));
    // Flips `f` between a regular file and a FIFO (no writer ever opens it) as fast as it can.
    const flipping = call(tools, "exec", {
      command: `end=$((SECONDS + 2)); while [ $SECONDS -lt $end ]; do rm -f f; mkfifo f; rm -f f; echo a > f; done; echo flipped`,
    }).catch((error: Error) => error.message);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const calls = Array.from({ length: 8 }, (_, index) => [
      settle(tools, "write", { path: "f", content: `w${index}` }),
      settle(tools, "edit", { path: "f", edits: [{ oldText: "a", newText: "b" }] }),
      settle(tools, "read", { path: "f" }),
    ]).flat();
    const results = await Promise.all(calls);
    // Each call ended by itself or by the wall time: refused (a pipe, gone), timed out, or done on a file.
    for (const result of results) expect(result.ms).toBeLessThan(timeoutMs + 2_000);
    expect(await flipping).toContain("flipped");
    expect(readdirSync(outside)).toEqual(["secret.txt"]);
  });

  it("a FIFO swapped in between the checks and the open: write and edit refuse it at once, read ends at the wall time", async () => {
    const timeoutMs = 1_500;
    const regularFile = () => {
      rmSync(join(ws, "f"), { force: true });
      writeFileSync(join(ws, "f"), "a\n");
      giveToSandbox(join(ws, "f"));
    };
    // The race made certain: each file command swaps its file for a FIFO right before opening it.
    const swapping: SandboxEngine = {
      name: engine.name,
      probe: (options) => engine.probe(options),
      check: (settings) => engine.check(settings),
      run: (command) =>
        engine.run({
          ...command,
          command: command.command.replace(/^\{ exec 3</m, 'rm -f -- "$1"; mkfifo -- "$1"; { exec 3<'),
        }),
    };
    const tools = toolsOf(sandboxOf({ timeoutMs }, swapping));
    regularFile();
    const write = await settle(tools, "write", { path: "f", content: "x" });
    regularFile();
    const edit = await settle(tools, "edit", { path: "f", edits: [{ oldText: "a", newText: "b" }] });
    regularFile();
    const read = await settle(tools, "read", { path: "f" });
    expect(write.text).toBe('error: "/workspace/f" is not a regular file');
    expect(edit.text).toBe(
      'error: Could not edit file: /workspace/f. Error: "/workspace/f" is not a regular file.',
    );
    expect(write.ms).toBeLessThan(timeoutMs);
    expect(edit.ms).toBeLessThan(timeoutMs);
    // Opening a FIFO to read waits for a writer: the engine's wall time ends it.
    expect(read.text).toBe(
      `error: cannot read "f": it did not finish within the sandbox's 2 s (something holds it open?)`,
    );
    expect(read.ms).toBeGreaterThanOrEqual(timeoutMs - 100);
    expect(read.ms).toBeLessThan(timeoutMs + 2_000);
  });

  it("a racing exec cannot make write land, nor read leak, outside the view", async () => {
    const tools = toolsOf(sandboxOf({ timeoutMs: 20_000 }));
    mkdirSync(join(outside, "state"));
    writeFileSync(join(outside, "state", "config.json5"), "{ apiKey: 'sk-live-SECRET-123' }\n", {
      mode: 0o600,
    });
    // `d` flips between nothing and a link to a host directory; a directory the write tool made is moved
    // aside (the review's race).
    const flip = `perl -e 'my $n=0; my $end = time + 3; while (time < $end) { if (-d "d" && !-l "d") { rename "d", "junk".$n++ } symlink("${outside}/state", "d"); unlink "d"; }'`;
    const flipping = call(tools, "exec", { command: `${flip}; echo flipped`, timeout: 20 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const writes = Array.from({ length: 40 }, (_, index) =>
      settle(tools, "write", { path: `d/pwned-${index}.txt`, content: "* * * * * root id > /tmp/owned\n" }),
    );
    const reads = Array.from({ length: 40 }, () => settle(tools, "read", { path: "d/config.json5" }));
    const results = await Promise.all([...writes, ...reads]);
    expect(await flipping).toContain("flipped");
    expect(readdirSync(join(outside, "state"))).toEqual(["config.json5"]);
    expect(readdirSync(outside).sort()).toEqual(["secret.txt", "state"]);
    for (const result of results) expect(result.text).not.toContain("sk-live");
  });

  it("reads 3 lines of a 50 MB file, stopping the sandboxed command once it has them", async () => {
    const line = `${"x".repeat(99)}\n`;
    writeFileSync(join(ws, "big.txt"), line.repeat(500_000));
    let streamed = 0;
    const counting: SandboxEngine = {
      name: engine.name,
      probe: (options) => engine.probe(options),
      check: (settings) => engine.check(settings),
      run: (command) =>
        engine.run({
          ...command,
          onStdout: (chunk) => {
            streamed += chunk.length;
            command.onStdout?.(chunk);
          },
        }),
    };
    const sandbox = sandboxOf({}, counting);
    const view = sandboxView(sandbox);
    const small = createBoundedReadTool(view, {
      source: sandboxReadSource(sandbox, view),
      lineCountScanBytes: 1024,
    });
    const result = await small.execute(
      "r",
      { path: "big.txt", limit: 3 },
      undefined,
      undefined,
      undefined as never,
    );
    const text = result.content.map((block) => (block.type === "text" ? block.text : "")).join("");
    expect(text).toBe(
      `${line}${line}${line.trimEnd()}\n\n[More lines in file (47.7MB). Use offset=4 to continue.]`,
    );
    expect(result.details).toMatchObject({ kind: "text", path: "/workspace/big.txt", sizeBytes: 50_000_000 });
    // Stopped long before the end (the pipe holds a little more than was asked when the command is killed).
    expect(streamed).toBeLessThan(8 * 1024 * 1024);

    // The default tool: counting lines for "of N" reads at most its scan budget further, then stops too.
    streamed = 0;
    const before = process.memoryUsage();
    const tools = toolsOf(sandbox);
    const started = performance.now();
    const window = await call(tools, "read", { path: "big.txt", offset: 10, limit: 2 });
    expect(window).toBe(
      `${line}${line.trimEnd()}\n\n[More lines in file (47.7MB). Use offset=12 to continue.]`,
    );
    expect(streamed).toBeLessThan(40 * 1024 * 1024);
    expect(performance.now() - started).toBeLessThan(LIMITS.timeoutMs);
    expect(process.memoryUsage().rss - before.rss).toBeLessThan(128 * 1024 * 1024);
    // And the end of the file, past every line.
    expect(await call(tools, "read", { path: "big.txt", offset: 500_000 })).toBe(`${line}`);
  });

  it("describes binary files and attaches images from inside", async () => {
    const png = Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
      "base64",
    );
    writeFileSync(join(ws, "dot.png"), png);
    writeFileSync(join(ws, "blob.bin"), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3]));
    const tools = toolsOf(sandboxOf());
    expect(await call(tools, "read", { path: "dot.png" })).toMatch(/^Read image file \[image\/png\]/);
    expect(await call(tools, "read", { path: "dot.png" })).toContain("[image]");
    expect(await call(tools, "read", { path: "blob.bin" })).toBe(
      "binary file, 8 bytes (looks like an ELF executable); its contents are not shown",
    );
  });

  it("refuses an edit of a file too large to load, and a write past the sandbox's file size limit", async () => {
    const tools = toolsOf(sandboxOf({ maxFileBytes: 1024 * 1024 }));
    writeFileSync(join(ws, "large.txt"), Buffer.alloc(MAX_EDIT_FILE_BYTES + 1, 0x61));
    giveToSandbox(join(ws, "large.txt"));
    await expect(
      call(tools, "edit", { path: "large.txt", edits: [{ oldText: "a", newText: "b" }] }),
    ).rejects.toThrow('"/workspace/large.txt" is larger than the 10.0MB edit loads');
    await expect(
      call(tools, "write", { path: "huge.txt", content: "y".repeat(2 * 1024 * 1024) }),
    ).rejects.toThrow('cannot write "/workspace/huge.txt": a sandboxed file may have at most 1.0MB');
  });

  it("stops when the call is aborted", async () => {
    const tools = toolsOf(sandboxOf());
    const controller = new AbortController();
    controller.abort();
    const write = tools.get("write");
    await expect(
      write?.execute(
        "w",
        { path: "x.txt", content: "x" } as never,
        controller.signal,
        undefined,
        undefined as never,
      ),
    ).rejects.toThrow("Operation aborted");
    expect(existsSync(join(ws, "x.txt"))).toBe(false);
  });
});

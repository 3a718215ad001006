import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, open, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { loadBootstrapFiles, trimBootstrapContent } from "./system-prompt.ts";

// Counts the bytes read through every handle the module opens, so a test can say how much of a file was read.
const reads = vi.hoisted(() => ({ bytes: 0 }));
vi.mock("node:fs/promises", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:fs/promises")>();
  return {
    ...actual,
    open: async (...args: Parameters<typeof actual.open>) => {
      const handle = await actual.open(...args);
      const read = handle.read.bind(handle) as (...a: unknown[]) => Promise<{ bytesRead: number }>;
      handle.read = (async (...a: unknown[]) => {
        const result = await read(...a);
        reads.bytes += result.bytesRead;
        return result;
      }) as typeof handle.read;
      return handle;
    },
  };
});

const SECRET = "HOST SECRET sk-ant-api03-DEADBEEF";
let root: string;
let workspace: string;
let outside: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "bootstrap-files-"));
  workspace = join(root, "workspace");
  outside = join(root, "outside");
  await mkdir(workspace);
  await mkdir(outside);
  await writeFile(join(outside, "secret.txt"), `${SECRET}\n`, { mode: 0o600 });
  reads.bytes = 0;
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const load = (maxChars = 20_000, mode: "full" | "minimal" = "minimal") =>
  loadBootstrapFiles(workspace, { maxChars, mode });
const agents = () => join(workspace, "AGENTS.md");
const tools = () => join(workspace, "TOOLS.md");

describe("loadBootstrapFiles", () => {
  it("reads a normal file as before: trimmed, blank skipped, missing marked", async () => {
    await writeFile(agents(), "# Agents\n\nBe kind.\n\n\n");
    await writeFile(join(workspace, "SOUL.md"), "  \n\t\n");
    const files = await load(20_000, "full");
    expect(files).toEqual([
      { path: agents(), content: "# Agents\n\nBe kind." },
      { path: join(workspace, "TOOLS.md"), content: `[MISSING] Expected at: ${join(workspace, "TOOLS.md")}` },
      {
        path: join(workspace, "IDENTITY.md"),
        content: `[MISSING] Expected at: ${join(workspace, "IDENTITY.md")}`,
      },
      { path: join(workspace, "USER.md"), content: `[MISSING] Expected at: ${join(workspace, "USER.md")}` },
    ]);
  });

  it("cuts a file over the cap, but within what it reads whole, exactly as trimBootstrapContent does", async () => {
    const text = `${"é🙂x".repeat(500)}\n`; // 3,501 bytes: read whole under a 500-char cap
    await writeFile(agents(), text);
    const [file] = await load(500);
    expect(file?.content).toBe(trimBootstrapContent(text, "AGENTS.md", 500).content);
    expect(file?.content.length).toBeLessThanOrEqual(500);
    expect(file?.content).toContain("chars of 2000)…"); // UTF-16 units, as before;
    expect(reads.bytes).toBe(Buffer.byteLength(text));
  });

  it("does not read a symbolic link to a file outside the workspace", async () => {
    await symlink(join(outside, "secret.txt"), agents());
    await symlink(join(root, "workspace", "..", "outside", "secret.txt"), tools());
    const files = await load();
    expect(JSON.stringify(files)).not.toContain("sk-ant-api03");
    expect(files).toEqual([
      {
        path: agents(),
        content: `[SKIPPED] Symbolic link not resolving to a file inside the workspace: ${agents()}`,
      },
      {
        path: tools(),
        content: `[SKIPPED] Symbolic link not resolving to a file inside the workspace: ${tools()}`,
      },
    ]);
    expect(reads.bytes).toBe(0);
  });

  it("does not read through a chain of links that ends outside, nor reveal whether the target exists", async () => {
    await symlink(join(outside, "secret.txt"), join(workspace, "hop"));
    await symlink("hop", agents());
    await symlink(join(outside, "no-such-file"), tools());
    const files = await load();
    expect(JSON.stringify(files)).not.toContain("sk-ant-api03");
    expect(files.map((file) => file.content)).toEqual([
      `[SKIPPED] Symbolic link not resolving to a file inside the workspace: ${agents()}`,
      `[SKIPPED] Symbolic link not resolving to a file inside the workspace: ${tools()}`,
    ]);
  });

  it("follows a link whose target stays inside the workspace", async () => {
    await mkdir(join(workspace, "docs"));
    await writeFile(join(workspace, "docs", "agents.md"), "Inside the workspace.\n");
    await symlink(join("docs", "agents.md"), agents());
    await writeFile(tools(), "Tools.\n");
    expect(await load()).toEqual([
      { path: agents(), content: "Inside the workspace." },
      { path: tools(), content: "Tools." },
    ]);
  });

  it("does not follow a link inside the workspace through a directory linked outside", async () => {
    await symlink(outside, join(workspace, "docs"));
    await symlink(join("docs", "secret.txt"), agents());
    const files = await load();
    expect(JSON.stringify(files)).not.toContain("sk-ant-api03");
    expect(files[0]?.content).toBe(
      `[SKIPPED] Symbolic link not resolving to a file inside the workspace: ${agents()}`,
    );
  });

  it.skipIf(process.platform === "win32")("skips a FIFO without waiting for a writer", async () => {
    execFileSync("mkfifo", [agents()]);
    await mkdir(join(workspace, "fifos"));
    execFileSync("mkfifo", [join(workspace, "fifos", "tools")]);
    await symlink(join("fifos", "tools"), tools());
    const started = Date.now();
    const files = await Promise.race([
      load(),
      new Promise<"hung">((resolve) => setTimeout(() => resolve("hung"), 3_000)),
    ]);
    expect(files).toEqual([
      { path: agents(), content: `[SKIPPED] Not a regular file (FIFO): ${agents()}` },
      { path: tools(), content: `[SKIPPED] Not a regular file (FIFO): ${tools()}` },
    ]);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("skips a directory (it used to throw EISDIR)", async () => {
    await mkdir(agents());
    expect((await load())[0]).toEqual({
      path: agents(),
      content: `[SKIPPED] Not a regular file (directory): ${agents()}`,
    });
  });

  it("reads only the head and tail of a 200 MB sparse file, up to the cap", async () => {
    const size = 200 * 1024 * 1024;
    const maxChars = 20_000;
    const handle = await open(agents(), "w");
    await handle.write("HEAD-OF-FILE ", 0);
    await handle.write(" END-OF-FILE\n", size - 13);
    await handle.close();
    // the old whole-file read held the file's size in memory: sample the peak while the load runs
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 1);
    const [file] = await load(maxChars);
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    expect(reads.bytes).toBeGreaterThan(0); // read through the counted handle
    expect(reads.bytes).toBeLessThanOrEqual(2 * (maxChars + 1) * 4);
    expect(peak - before).toBeLessThan(size / 4);
    const content = file?.content ?? "";
    expect(content.length).toBeLessThanOrEqual(maxChars);
    expect(content.startsWith("HEAD-OF-FILE ")).toBe(true);
    expect(content.endsWith(" END-OF-FILE")).toBe(true);
    expect(content).toContain("[...truncated, read AGENTS.md for full content...]");
    expect(content).toMatch(/…\(truncated AGENTS\.md: kept \d+\+\d+ chars of 209715200 bytes\)…/);
  });

  it("keeps whole UTF-8 characters at both ends of a large file", async () => {
    const maxChars = 400; // a 1,604-byte window: both ends fall inside a 3-byte character
    await writeFile(agents(), `${"€".repeat(5_000)}\n${"€".repeat(5_000)}`);
    const [file] = await load(maxChars);
    const content = file?.content ?? "";
    expect(reads.bytes).toBeLessThanOrEqual(2 * (maxChars + 1) * 4);
    expect(content).not.toContain("\uFFFD");
    expect(content).toMatch(/^€+\n\n\[\.\.\.truncated/);
    expect(content).toMatch(/chars of 30001 bytes\)…\n\n€+$/);
  });
});

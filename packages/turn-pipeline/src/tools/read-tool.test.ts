import { execFileSync } from "node:child_process";
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  realpathSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createReadToolDefinition } from "@earendil-works/pi-coding-agent";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hostPathView, type PathView } from "./path-view.ts";
import { ourOutcome, piOutcome } from "./read-tool.test-helpers.ts";
import { type BoundedReadDetails, type BoundedReadToolOptions, createBoundedReadTool } from "./read-tool.ts";

let base: string;
let ws: string;

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "read-tool-")));
  ws = join(base, "ws");
  mkdirSync(ws);
});
afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

interface ReadResult {
  readonly text: string;
  readonly images: readonly { readonly mimeType: string; readonly data: string }[];
  readonly details: BoundedReadDetails;
}

async function read(
  params: { path: string; offset?: number; limit?: number },
  options: BoundedReadToolOptions = {},
  view: PathView = hostPathView(ws),
): Promise<ReadResult> {
  const tool = createBoundedReadTool(view, options);
  const result = await tool.execute("call-1", params, undefined, undefined, undefined as never);
  return {
    text: result.content.map((block) => (block.type === "text" ? block.text : "")).join(""),
    images: result.content.flatMap((block) =>
      block.type === "image" ? [{ mimeType: block.mimeType, data: block.data }] : [],
    ),
    details: result.details,
  };
}

const numbered = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, index) => `line ${from + index}`);

// A valid 1x1 PNG.
const PNG_1X1 = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);

describe("createBoundedReadTool: text", () => {
  it("has pi's read parameters, so the model calls it the same way", () => {
    const ours = createBoundedReadTool(hostPathView(ws));
    const pis = createReadToolDefinition(ws);
    expect(ours.name).toBe("read");
    expect(Object.keys(ours.parameters.properties)).toEqual(Object.keys(pis.parameters.properties));
    expect(ours.parameters.required).toEqual(pis.parameters.required);
    expect(ours.description).toContain(`Relative paths start at ${ws}`);
  });

  it("returns a small file whole, and a window with the offset that continues", async () => {
    // Ten lines and a final newline: eleven lines for pi (`split("\n")`), the last one empty.
    writeFileSync(join(ws, "ten.txt"), `${numbered(1, 10).join("\n")}\n`);
    const whole = await read({ path: "ten.txt" });
    expect(whole.text).toBe(`${numbered(1, 10).join("\n")}\n`);
    expect(whole.details).toMatchObject({ kind: "text", firstLine: 1, lastLine: 11, totalLines: 11 });
    expect(whole.details.nextOffset).toBeUndefined();

    const window = await read({ path: "ten.txt", offset: 3, limit: 4 });
    expect(window.text).toBe(
      `${numbered(3, 6).join("\n")}\n\n[5 more lines in file. Use offset=7 to continue.]`,
    );
    expect(window.details).toMatchObject({ firstLine: 3, lastLine: 6, nextOffset: 7, truncatedBy: "limit" });

    // A window that reaches the end (the empty line after the final newline included) says nothing more.
    expect((await read({ path: "ten.txt", offset: 7, limit: 5 })).text).toBe(
      `${numbered(7, 10).join("\n")}\n`,
    );
    expect((await read({ path: "ten.txt", offset: 9 })).text).toBe(`${numbered(9, 10).join("\n")}\n`);
    // One that stops before the empty last line says it is there, as pi does.
    expect((await read({ path: "ten.txt", offset: 7, limit: 4 })).text).toBe(
      `${numbered(7, 10).join("\n")}\n\n[1 more lines in file. Use offset=11 to continue.]`,
    );
    for (const params of [
      {},
      { offset: 3, limit: 4 },
      { offset: 7, limit: 4 },
      { offset: 9 },
      { offset: 11 },
    ]) {
      expect(await ourOutcome(ws, { path: "ten.txt", ...params })).toEqual(
        await piOutcome(ws, { path: "ten.txt", ...params }),
      );
    }
  });

  it("counts lines as pi does: a last line without a newline, and an empty one after a final newline", async () => {
    writeFileSync(join(ws, "no-newline.txt"), "first\nsecond\nlast");
    expect((await read({ path: "no-newline.txt", offset: 3 })).text).toBe("last");
    expect((await read({ path: "no-newline.txt" })).details.totalLines).toBe(3);
    writeFileSync(join(ws, "newline.txt"), "first\nsecond\n");
    expect((await read({ path: "newline.txt" })).details.totalLines).toBe(3);
    expect((await read({ path: "newline.txt", offset: 3 })).text).toBe("");
    writeFileSync(join(ws, "empty.txt"), "");
    expect((await read({ path: "empty.txt" })).text).toBe("");
    expect((await read({ path: "empty.txt" })).details.totalLines).toBe(1);
    writeFileSync(join(ws, "blank-lines.txt"), "a\n\n\nb\n");
    expect((await read({ path: "blank-lines.txt", offset: 2, limit: 2 })).text).toBe(
      "\n\n\n[2 more lines in file. Use offset=4 to continue.]",
    );
    expect(await ourOutcome(ws, { path: "blank-lines.txt", offset: 2, limit: 2 })).toEqual(
      await piOutcome(ws, { path: "blank-lines.txt", offset: 2, limit: 2 }),
    );
  });

  it("keeps CRLF line ends as they are, like pi's read", async () => {
    writeFileSync(join(ws, "crlf.txt"), "one\r\ntwo\r\nthree\r\n");
    const ours = await read({ path: "crlf.txt", limit: 2 });
    expect(ours.text).toBe("one\r\ntwo\r\n\n[2 more lines in file. Use offset=3 to continue.]");
    expect(await piOutcome(ws, { path: join(ws, "crlf.txt"), limit: 2 })).toEqual({ text: ours.text });
    expect((await read({ path: "crlf.txt" })).text).toBe("one\r\ntwo\r\nthree\r\n");
  });

  it("stops at pi's 2000 lines and says which offset continues", async () => {
    writeFileSync(join(ws, "long.txt"), `${numbered(1, 2500).join("\n")}\n`);
    const first = await read({ path: "long.txt" });
    expect(first.text).toBe(
      `${numbered(1, 2000).join("\n")}\n\n[Showing lines 1-2000 of 2501. Use offset=2001 to continue.]`,
    );
    expect(first.details).toMatchObject({ truncatedBy: "lines", nextOffset: 2001, totalLines: 2501 });
    // A limit above the line cap is capped too.
    expect((await read({ path: "long.txt", limit: 2400 })).details.lastLine).toBe(2000);
    expect((await read({ path: "long.txt", offset: 2001 })).text).toBe(
      `${numbered(2001, 2500).join("\n")}\n`,
    );
    for (const params of [{}, { limit: 2400 }, { offset: 2001 }, { offset: 501 }, { offset: 502 }]) {
      expect(await ourOutcome(ws, { path: "long.txt", ...params })).toEqual(
        await piOutcome(ws, { path: "long.txt", ...params }),
      );
    }
  });

  it("stops at pi's 50KB of output on a line boundary", async () => {
    const line = "x".repeat(1023); // 1 KB with its newline
    writeFileSync(join(ws, "wide.txt"), `${Array.from({ length: 100 }, () => line).join("\n")}\n`);
    const result = await read({ path: "wide.txt" });
    const shown = result.text.split("\n\n[")[0] ?? "";
    expect(shown.split("\n")).toHaveLength(50);
    expect(Buffer.byteLength(shown)).toBeLessThanOrEqual(50 * 1024);
    expect(result.text).toMatch(
      /\[Showing lines 1-50 of 101 \(50\.0KB limit\)\. Use offset=51 to continue\.\]$/,
    );
    expect(await ourOutcome(ws, { path: "wide.txt" })).toEqual(await piOutcome(ws, { path: "wide.txt" }));
  });

  it("cuts a single line over the byte limit on a character boundary and continues after it", async () => {
    // 3-byte characters: 50 KB is not a multiple of 3, so a naive cut would split one.
    const huge = "€".repeat(100_000);
    writeFileSync(join(ws, "one-line.txt"), `short\n${huge}\nafter\n`);
    const result = await read({ path: "one-line.txt", offset: 2 });
    const head = result.text.split("\n\n[")[0] ?? "";
    expect(head).not.toContain("\uFFFD");
    expect(head).toBe("€".repeat(Math.floor((50 * 1024) / 3)));
    expect(result.text).toMatch(
      /\[Line 2 is 293\.0KB, over the 50\.0KB limit: showing its first 50\.0KB\. Use offset=3 to continue after it\.\]$/,
    );
    expect(result.details).toMatchObject({ truncatedBy: "line-length", nextOffset: 3, totalLines: 4 });
    expect((await read({ path: "one-line.txt", offset: 3 })).text).toBe("after\n");
    // Where the long line is not the first one shown, the output stops before it, as pi's does.
    expect(await ourOutcome(ws, { path: "one-line.txt" })).toEqual(
      await piOutcome(ws, { path: "one-line.txt" }),
    );
  });

  it("returns exactly the requested lines wherever the read buffer splits them", async () => {
    // Lines of varied length, multibyte characters and CR, across several 64 KB read chunks.
    const lines = Array.from({ length: 3000 }, (_, index) => {
      const width = (index * 7919) % 400;
      return `${index + 1}:${"é".repeat(width % 37)}${"a".repeat(width)}${index % 5 === 0 ? "\r" : ""}`;
    });
    writeFileSync(join(ws, "varied.txt"), lines.join("\n"));
    const roomy = { maxBytes: 10 * 1024 * 1024, maxLines: 10_000 };
    for (const [offset, limit] of [
      [1, 3000],
      [1, 1],
      [137, 911],
      [2999, 5],
      [1500, undefined],
    ] as const) {
      const result = await read(
        { path: "varied.txt", offset, ...(limit === undefined ? {} : { limit }) },
        roomy,
      );
      const expected = lines.slice(offset - 1, limit === undefined ? undefined : offset - 1 + limit);
      expect(result.text.split("\n\n[")[0]).toBe(expected.join("\n"));
    }
  });

  it("refuses an offset past the end and a negative limit; a limit of 0 says where the lines are", async () => {
    writeFileSync(join(ws, "three.txt"), "a\nb\nc\n");
    // "a\nb\nc\n" is four lines for pi, the last one empty.
    expect((await read({ path: "three.txt", offset: 4 })).text).toBe("");
    await expect(read({ path: "three.txt", offset: 5 })).rejects.toThrow(
      "Offset 5 is beyond end of file (4 lines total)",
    );
    expect((await read({ path: "three.txt", offset: 2, limit: 0 })).text).toBe(
      "\n\n[3 more lines in file. Use offset=2 to continue.]",
    );
    // pi would slice from the end of the file for a negative limit; this one does not guess.
    await expect(read({ path: "three.txt", limit: -1 })).rejects.toThrow(
      "limit must be 0 or more lines (got -1)",
    );
    for (const params of [
      { offset: 4 },
      { offset: 5 },
      { offset: 2, limit: 0 },
      { offset: 0 },
      { offset: -3 },
    ]) {
      expect(await ourOutcome(ws, { path: "three.txt", ...params })).toEqual(
        await piOutcome(ws, { path: "three.txt", ...params }),
      );
    }
  });

  it("does not give a total it did not count: past the scan budget it says more lines follow", async () => {
    writeFileSync(join(ws, "many.txt"), `${numbered(1, 5000).join("\n")}\n`);
    const result = await read({ path: "many.txt", limit: 2 }, { lineCountScanBytes: 1024 });
    expect(result.text).toMatch(
      /^line 1\nline 2\n\n\[More lines in file \(\d+\.\dKB\)\. Use offset=3 to continue\.\]$/,
    );
    expect(result.details.totalLines).toBeUndefined();
  });
});

describe("createBoundedReadTool: bounded memory", () => {
  it("reads 3 lines of a 200 MB file without holding the file in memory", async () => {
    // A text head longer than the binary sniff, then a sparse tail: large on disk in size, instant to make.
    const path = join(ws, "big.log");
    const head = `${numbered(1, 2000).join("\n")}\n`;
    const fd = openSync(path, "w");
    writeSync(fd, head);
    closeSync(fd);
    execFileSync("truncate", ["-s", String(200 * 1024 * 1024), path]);

    const before = process.memoryUsage();
    let peakArrayBuffers = before.arrayBuffers;
    let peakRss = before.rss;
    const sampler = setInterval(() => {
      const now = process.memoryUsage();
      peakArrayBuffers = Math.max(peakArrayBuffers, now.arrayBuffers);
      peakRss = Math.max(peakRss, now.rss);
    }, 1);
    let result: ReadResult;
    try {
      result = await read({ path: "big.log", offset: 10, limit: 3 });
    } finally {
      clearInterval(sampler);
    }
    const after = process.memoryUsage();
    peakArrayBuffers = Math.max(peakArrayBuffers, after.arrayBuffers);
    peakRss = Math.max(peakRss, after.rss);

    expect(result.text).toBe(
      `${numbered(10, 12).join("\n")}\n\n[More lines in file (200.0MB). Use offset=13 to continue.]`,
    );
    // pi's read tool would hold 200 MB of bytes, then the 200 MB string.
    expect(peakArrayBuffers - before.arrayBuffers).toBeLessThan(8 * 1024 * 1024);
    expect(peakRss - before.rss).toBeLessThan(64 * 1024 * 1024);
  });
});

describe("createBoundedReadTool: binary files and images", () => {
  const describeFile = async (name: string, bytes: Buffer) => {
    writeFileSync(join(ws, name), bytes);
    return (await read({ path: name })).text;
  };

  it("describes binary files by size and magic bytes instead of dumping them", async () => {
    const elf = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(12337)]);
    expect(await describeFile("tool", elf)).toBe(
      "binary file, 12345 bytes (looks like an ELF executable); its contents are not shown",
    );
    const gzip = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xff, 0x00]);
    expect(await describeFile("data.gz", gzip)).toMatch(/^binary file, 12 bytes \(looks like gzip data\)/);
    const zip = Buffer.concat([Buffer.from("PK\u0003\u0004", "latin1"), Buffer.alloc(40)]);
    expect(await describeFile("a.zip", zip)).toMatch(/looks like a zip archive/);
    const pdf = Buffer.concat([
      Buffer.from("%PDF-1.7\n%", "latin1"),
      Buffer.from([0xe2, 0xe3, 0xcf, 0xd3, 0x0a]),
    ]);
    expect(await describeFile("doc.pdf", pdf)).toMatch(/looks like a PDF document/);
    // Invalid UTF-8 without a NUL, and no known magic.
    expect(await describeFile("latin1.txt", Buffer.from("caf\u00e9 cr\u00e8me\n", "latin1"))).toMatch(
      /^binary file, 11 bytes \(unknown type\)/,
    );
    // An animated PNG is not an image pi attaches: described, not sent.
    const apng = Buffer.from(PNG_1X1);
    apng.write("acTL", 37, "latin1");
    expect(await describeFile("anim.png", apng)).toMatch(/binary file, \d+ bytes \(looks like a PNG image\)/);
  });

  it("still reads text whose 8 KB sniff ends in the middle of a character", async () => {
    // 8191 ASCII bytes then "€" (3 bytes): the sniff holds only the first byte of it.
    const text = `${"a".repeat(8191)}€ and more\nsecond line\n`;
    writeFileSync(join(ws, "boundary.txt"), text);
    const result = await read({ path: "boundary.txt" });
    expect(result.details.kind).toBe("text");
    expect(result.text).toBe(text);
  });

  it("hands images to pi's read tool so the model gets the picture, up to the size cap", async () => {
    writeFileSync(join(ws, "dot.png"), PNG_1X1);
    const image = await read({ path: "dot.png" });
    expect(image.text).toContain("Read image file [image/png]");
    expect(image.images).toHaveLength(1);
    expect(image.images[0]?.mimeType).toBe("image/png");
    expect(Buffer.from(image.images[0]?.data ?? "", "base64").subarray(0, 8)).toEqual(PNG_1X1.subarray(0, 8));
    expect(image.details).toMatchObject({ kind: "image", sizeBytes: PNG_1X1.length });

    const capped = await read({ path: "dot.png" }, { maxImageBytes: 10 });
    expect(capped.images).toHaveLength(0);
    expect(capped.text).toBe(
      `image file, ${PNG_1X1.length} bytes (image/png): larger than the 10B the read tool attaches, so not shown`,
    );
  });
});

describe("createBoundedReadTool: paths and errors", () => {
  it("reads through a sandbox view and reports the view path", async () => {
    const agentDir = join(base, "agent");
    mkdirSync(agentDir);
    writeFileSync(join(agentDir, "notes.md"), "agent notes\n");
    writeFileSync(join(ws, "mine.txt"), "mine\n");
    const sandbox: PathView = {
      cwd: "/workspace",
      mounts: [
        { path: "/workspace", hostPath: ws, writable: true },
        { path: "/agent", hostPath: agentDir, writable: false },
      ],
    };
    const notes = await read({ path: "/agent/notes.md" }, {}, sandbox);
    expect(notes.text).toBe("agent notes\n");
    expect(notes.details.path).toBe("/agent/notes.md");
    expect((await read({ path: "mine.txt" }, {}, sandbox)).details.path).toBe("/workspace/mine.txt");
    await expect(read({ path: join(ws, "mine.txt") }, {}, sandbox)).rejects.toThrow(/outside the workspace/);
    const tool = createBoundedReadTool(sandbox);
    expect(tool.description).toContain("files are under /workspace, /agent (read-only)");
  });

  it("says clearly when the path is missing, a directory, a pipe or outside", async () => {
    await expect(read({ path: "nope.txt" })).rejects.toThrow('file "nope.txt" does not exist');
    await expect(read({ path: "nope/deeper.txt" })).rejects.toThrow(/does not exist/);
    mkdirSync(join(ws, "folder"));
    await expect(read({ path: "folder" })).rejects.toThrow('"folder" is a directory, not a file');
    execFileSync("mkfifo", [join(ws, "pipe")]);
    // Opening a FIFO for reading would wait for a writer; the tool must not.
    await expect(read({ path: "pipe" })).rejects.toThrow('"pipe" is a named pipe, not a file');
    await expect(read({ path: "../etc" })).rejects.toThrow(/outside the workspace/);
  });

  it("stops when the call is aborted", async () => {
    writeFileSync(join(ws, "a.txt"), "a\n");
    const controller = new AbortController();
    controller.abort();
    const tool = createBoundedReadTool(hostPathView(ws));
    await expect(
      tool.execute("call-1", { path: "a.txt" }, controller.signal, undefined, undefined as never),
    ).rejects.toThrow("Operation aborted");
  });
});

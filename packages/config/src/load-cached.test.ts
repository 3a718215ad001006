import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "./errors.ts";
import { loadConfig } from "./load.ts";
import { CACHE_ENTRY_LIMIT, configCacheDir, loadConfigCached } from "./load-cached.ts";

const EXAMPLE = join(import.meta.dirname, "..", "..", "..", "examples", "agent-kernel.config.json5");

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "agent-kernel-config-cache-"));
}

/** A config file and an empty cache folder of their own. */
function scratch(text: string): { file: string; cacheDir: string } {
  const dir = tempDir();
  const file = join(dir, "config.json5");
  writeFileSync(file, text);
  return { file, cacheDir: join(dir, "cache") };
}

function entries(cacheDir: string): string[] {
  try {
    return readdirSync(cacheDir);
  } catch {
    return [];
  }
}

async function rejection(run: () => Promise<unknown>): Promise<ConfigError> {
  try {
    await run();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

const TEXT =
  "{ agents: { list: [{ id: 'Main', default: true }, { id: 'ops' }] }, messages: { queue: { cap: 3 } } }";

describe("loadConfigCached", () => {
  it("gives loadConfig's config, validated the first time and read from the cache the next", async () => {
    const { file, cacheDir } = scratch(TEXT);
    const expected = loadConfig({ path: file, env: {}, cpuCount: 2 });
    const first = await loadConfigCached({ path: file, env: {}, cpuCount: 2, cacheDir });
    expect(first).toEqual(expected);
    expect(entries(cacheDir)).toHaveLength(1);
    const second = await loadConfigCached({ path: file, env: {}, cpuCount: 2, cacheDir });
    expect(second).toEqual(expected);
    // each call gets its own object: callers write the state dir into theirs
    expect(second.config).not.toBe(first.config);
  });

  it("loads the example config like loadConfig, twice", async () => {
    const cacheDir = join(tempDir(), "cache");
    const expected = loadConfig({ path: EXAMPLE, env: {}, cpuCount: 1 });
    expect(await loadConfigCached({ path: EXAMPLE, env: {}, cpuCount: 1, cacheDir })).toEqual(expected);
    expect(await loadConfigCached({ path: EXAMPLE, env: {}, cpuCount: 1, cacheDir })).toEqual(expected);
  });

  it("uses the entry only for the exact text it was made from", async () => {
    const { file, cacheDir } = scratch(TEXT);
    await loadConfigCached({ path: file, env: {}, cacheDir });
    // An entry edited in place (same key) is what the next load returns: proof that it reads the cache...
    const [name] = entries(cacheDir);
    const entryFile = join(cacheDir, name as string);
    const entry = JSON.parse(readFileSync(entryFile, "utf8"));
    entry.config.messages.queue.cap = 99;
    writeFileSync(entryFile, JSON.stringify(entry));
    expect((await loadConfigCached({ path: file, env: {}, cacheDir })).config.messages.queue.cap).toBe(99);
    // ...and a text that differs by one character is validated afresh and replaces the entry.
    writeFileSync(file, TEXT.replace("cap: 3", "cap: 4"));
    expect((await loadConfigCached({ path: file, env: {}, cacheDir })).config.messages.queue.cap).toBe(4);
    expect(JSON.parse(readFileSync(entryFile, "utf8")).config.messages.queue.cap).toBe(4);
  });

  it("reports an invalid config exactly as loadConfig does, every time, and keeps no entry for it", async () => {
    const { file, cacheDir } = scratch("{ agents: { list: [{ id: 'bad id!' }] }, bogus: 1 }");
    let expected: string | undefined;
    try {
      loadConfig({ path: file, env: {} });
    } catch (error) {
      expected = (error as Error).message;
    }
    expect(expected).toContain("bogus");
    for (let attempt = 0; attempt < 2; attempt++) {
      expect((await rejection(() => loadConfigCached({ path: file, env: {}, cacheDir }))).message).toBe(
        expected,
      );
    }
    expect(entries(cacheDir)).toEqual([]);
  });

  it("reports a syntax error and a missing file as loadConfig does", async () => {
    const { file, cacheDir } = scratch("{ agents: ");
    const syntax = await rejection(() => loadConfigCached({ path: file, env: {}, cacheDir }));
    expect(syntax.message).toContain("JSON5 syntax error at line 1");
    const missing = await rejection(() =>
      loadConfigCached({ path: join(tempDir(), "nope.json5"), env: {}, cacheDir }),
    );
    expect(missing.message).toContain("does not exist");
  });

  it("never keeps a config that references the environment or holds a literal secret", async () => {
    const withEnv = scratch("{ messages: { queue: { mode: '${QUEUE_MODE}' } } }");
    const loaded = await loadConfigCached({
      path: withEnv.file,
      env: { QUEUE_MODE: "collect" },
      cacheDir: withEnv.cacheDir,
    });
    expect(loaded.config.messages.queue.mode).toBe("collect");
    expect(entries(withEnv.cacheDir)).toEqual([]);
    // the next environment's value counts: nothing was kept from the first
    const again = await loadConfigCached({
      path: withEnv.file,
      env: { QUEUE_MODE: "followup" },
      cacheDir: withEnv.cacheDir,
    });
    expect(again.config.messages.queue.mode).toBe("followup");

    const withSecret = scratch(
      "{ models: { providers: { p: { baseUrl: 'http://127.0.0.1:1/v1', api: 'openai-completions', models: [{ id: 'm' }], apiKey: 'sk-abcdefghijklmnopqrstuvwx123456' } } } }",
    );
    await loadConfigCached({ path: withSecret.file, env: {}, cacheDir: withSecret.cacheDir });
    expect(entries(withSecret.cacheDir)).toEqual([]);
  });

  it("never keeps a config whose parsed strings reference the environment through a JSON5 escape", async () => {
    // Each decodes to ${QUEUE_MODE} only when parsed: the raw text holds no "${".
    for (const written of [
      "\\u0024{QUEUE_MODE}",
      "\\x24{QUEUE_MODE}",
      "$\\{QUEUE_MODE}",
      "$\\\n{QUEUE_MODE}",
    ]) {
      const { file, cacheDir } = scratch(`{ messages: { queue: { mode: "${written}" } } }`);
      const first = await loadConfigCached({ path: file, env: { QUEUE_MODE: "collect" }, cacheDir });
      expect(first.config.messages.queue.mode).toBe("collect");
      expect(entries(cacheDir)).toEqual([]);
      const second = await loadConfigCached({ path: file, env: { QUEUE_MODE: "followup" }, cacheDir });
      expect(second.config.messages.queue.mode).toBe("followup");
      const unset = await rejection(() => loadConfigCached({ path: file, env: {}, cacheDir }));
      expect(unset.message).toContain("QUEUE_MODE");
    }
  });

  it("never keeps a value where a secret goes: a skill's env, a header, a credential key", async () => {
    for (const text of [
      "{ skills: { entries: { notion: { env: { NOTION_KEY: 'ntn_plain' } } } } }",
      "{ models: { providers: { p: { baseUrl: 'http://127.0.0.1:1/v1', api: 'openai-completions', models: [{ id: 'm' }], headers: { 'X-Title': 'plain' } } } } }",
      "{ models: { providers: { p: { baseUrl: 'http://127.0.0.1:1/v1', api: 'openai-completions', models: [{ id: 'm' }], apiKey: 'plain' } } } }",
    ]) {
      const { file, cacheDir } = scratch(text);
      await loadConfigCached({ path: file, env: {}, cacheDir });
      expect(entries(cacheDir), text).toEqual([]);
    }
  });

  it("fills this machine's maxConcurrent on every load, not the one of the load that made the entry", async () => {
    const { file, cacheDir } = scratch(TEXT);
    const one = await loadConfigCached({ path: file, env: {}, cpuCount: 1, cacheDir });
    const four = await loadConfigCached({ path: file, env: {}, cpuCount: 4, cacheDir });
    expect(one.config.agents.defaults.maxConcurrent).toBe(8);
    expect(four.config.agents.defaults.maxConcurrent).toBe(16);
  });

  it("ignores an entry it cannot read and writes a good one", async () => {
    const { file, cacheDir } = scratch(TEXT);
    await loadConfigCached({ path: file, env: {}, cacheDir });
    const entryFile = join(cacheDir, entries(cacheDir)[0] as string);
    for (const damaged of ["", "{", "null", '{"key":"x","config":{}}', '{"config":[]}']) {
      writeFileSync(entryFile, damaged);
      expect(await loadConfigCached({ path: file, env: {}, cacheDir })).toEqual(
        loadConfig({ path: file, env: {} }),
      );
    }
    expect(JSON.parse(readFileSync(entryFile, "utf8")).config.messages.queue.cap).toBe(3);
  });

  it("keeps its folder and entries owner-only, and does not use a folder others can write", async () => {
    const { file, cacheDir } = scratch(TEXT);
    await loadConfigCached({ path: file, env: {}, cacheDir });
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(cacheDir, entries(cacheDir)[0] as string)).mode & 0o777).toBe(0o600);

    const shared = scratch(TEXT);
    mkdirSync(shared.cacheDir);
    chmodSync(shared.cacheDir, 0o777);
    expect(await loadConfigCached({ path: shared.file, env: {}, cacheDir: shared.cacheDir })).toEqual(
      loadConfig({ path: shared.file, env: {} }),
    );
    expect(entries(shared.cacheDir)).toEqual([]);
  });

  it("keeps at most CACHE_ENTRY_LIMIT entries, removing the least recently written", async () => {
    const { file, cacheDir } = scratch(TEXT);
    mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
    const old = Array.from({ length: CACHE_ENTRY_LIMIT + 5 }, (_, index) => {
      const entry = join(cacheDir, `old-${String(index).padStart(3, "0")}.json`);
      writeFileSync(entry, "{}", { mode: 0o600 });
      const at = new Date(Date.UTC(2020, 0, 1) + index * 60_000);
      utimesSync(entry, at, at);
      return entry;
    });
    await loadConfigCached({ path: file, env: {}, cacheDir });
    const left = entries(cacheDir);
    expect(left).toHaveLength(CACHE_ENTRY_LIMIT);
    // the six oldest went, the newest old ones and the entry just written stayed
    for (const entry of old.slice(0, 6)) expect(existsSync(entry)).toBe(false);
    for (const entry of old.slice(6)) expect(existsSync(entry)).toBe(true);
    expect(left.filter((name) => !name.startsWith("old-"))).toHaveLength(1);
  });

  it("keeps nothing when the cache is off", async () => {
    const { file, cacheDir } = scratch(TEXT);
    await loadConfigCached({ path: file, env: { AGENT_KERNEL_CONFIG_CACHE: "off" }, homeDir: tempDir() });
    await loadConfigCached({ path: file, env: {}, cacheDir: null });
    expect(entries(cacheDir)).toEqual([]);
  });

  it("loads the defaults when no file exists", async () => {
    const home = tempDir();
    const cacheDir = join(home, "cache");
    const expected = loadConfig({ env: {}, homeDir: home, cpuCount: 1 });
    for (let attempt = 0; attempt < 2; attempt++) {
      expect(await loadConfigCached({ env: {}, homeDir: home, cpuCount: 1, cacheDir })).toEqual(expected);
    }
  });

  it("lives under $AGENT_KERNEL_CONFIG_CACHE, else $XDG_CACHE_HOME, else ~/.cache", () => {
    expect(configCacheDir({ AGENT_KERNEL_CONFIG_CACHE: "/c" }, "/home/u")).toBe("/c");
    expect(configCacheDir({ AGENT_KERNEL_CONFIG_CACHE: "off" }, "/home/u")).toBeUndefined();
    expect(configCacheDir({ XDG_CACHE_HOME: "/x" }, "/home/u")).toBe("/x/agent-kernel/config");
    expect(configCacheDir({}, "/home/u")).toBe("/home/u/.cache/agent-kernel/config");
    // the environment's home, when it names one, not the process's
    expect(configCacheDir({ HOME: "/home/env" })).toBe("/home/env/.cache/agent-kernel/config");
    expect(configCacheDir({ HOME: "/home/env" }, "/home/u")).toBe("/home/u/.cache/agent-kernel/config");
  });

  it("does not load the schema (nor zod) when the entry is there", () => {
    const { file, cacheDir } = scratch(TEXT);
    // A process of its own, so that no module is loaded yet: it lists the modules a second load brings in.
    const script = `
      import { registerHooks } from "node:module";
      const loaded = [];
      registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
      const { loadConfigCached } = await import(${JSON.stringify(join(import.meta.dirname, "load-cached.ts"))});
      const options = { path: ${JSON.stringify(file)}, env: {}, cacheDir: ${JSON.stringify(cacheDir)} };
      const before = loaded.length;
      const first = await loadConfigCached(process.argv[1] === "warm" ? options : { ...options, cacheDir: null });
      console.log(JSON.stringify({ modules: loaded.slice(before), cap: first.config.messages.queue.cap }));
    `;
    const run = (mode: string) => {
      const child = spawnSync(
        process.execPath,
        ["--conditions=@agent-kernel/source", "--input-type=module", "-e", script, mode],
        { encoding: "utf8" },
      );
      expect(child.status, child.stderr).toBe(0);
      return JSON.parse(child.stdout) as { modules: string[]; cap: number };
    };
    const cold = run("cold");
    expect(cold.modules.some((url) => url.endsWith("/schema.ts"))).toBe(true);
    run("warm"); // makes the entry
    const warm = run("warm");
    expect(warm.cap).toBe(3);
    expect(warm.modules.filter((url) => /\/schema[^/]*\.ts$|\/zod\//.test(url))).toEqual([]);
  });
});

// The third-party path, for real: every package built (turbo, cached), versioned and published with
// changesets from a scratch copy of the workspace to a local Verdaccio on loopback, then installed one at a
// time with plain npm into fresh projects outside the repo. Each README's marked examples run there as
// `.mjs` and typecheck as strict `.ts` (skipLibCheck off), and the `agent` CLI is installed globally.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeLlm, reply, startFakeLlm } from "@agent-kernel/fake-llm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Consumer, describeRun, NPM_CLI, ownErrors, tscErrors } from "./consumer.ts";
import {
  bundleOutputs,
  changeset,
  copyWorkspace,
  REPO_ROOT,
  useRegistry,
  workspacePackages,
} from "./publish.ts";
import { readmeExamples, toJavaScript } from "./readme-examples.ts";
import { type LocalRegistry, startLocalRegistry } from "./registry.ts";

/** A setting of the machine's npm config (`npm config get <name>`), undefined when unset. */
function npmSetting(name: string): string | undefined {
  const value = execFileSync(process.execPath, [NPM_CLI, "config", "get", name], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
    env: { ...process.env, NODE_OPTIONS: "" },
  }).trim();
  return value === "" || value === "undefined" || value === "null" ? undefined : value;
}

/** Third-party packages come from the registry the machine's npm is set up with. */
function upstreamRegistry(): string {
  const url = npmSetting("registry") ?? "https://registry.npmjs.org/";
  return url.endsWith("/") ? url : `${url}/`;
}

const PUBLIC = workspacePackages().filter((pkg) => !pkg.private);

let root: string;
let registry: LocalRegistry;
let llm: FakeLlm;
const published = new Map<string, string>();

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "registry-roundtrip-"));
  const build = spawnSync(
    join(REPO_ROOT, "tooling", "pnpm"),
    [
      "exec",
      "turbo",
      "run",
      "build",
      "--filter=./packages/*",
      "--filter=./apps/*",
      "--output-logs=errors-only",
    ],
    { cwd: REPO_ROOT, encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" } },
  );
  if (build.status !== 0) throw new Error(`building the packages failed:\n${build.stdout}\n${build.stderr}`);

  registry = await startLocalRegistry(
    join(root, "registry"),
    upstreamRegistry(),
    process.env.NODE_EXTRA_CA_CERTS ?? npmSetting("cafile"),
  );
  const scratch = join(root, "scratch");
  copyWorkspace(scratch);
  useRegistry(scratch, registry.url, registry.token);
  const version = changeset(scratch, ["version"], registry.url);
  if (version.status !== 0) throw new Error(`changeset version failed:\n${version.output}`);
  const publish = changeset(scratch, ["publish", "--no-git-tag"], registry.url);
  if (publish.status !== 0) {
    throw new Error(`changeset publish failed:\n${publish.output}\n--- registry\n${registry.log()}`);
  }
  for (const pkg of PUBLIC) {
    const manifest = JSON.parse(readFileSync(join(scratch, pkg.dir, "package.json"), "utf8")) as {
      version: string;
    };
    published.set(pkg.name, manifest.version);
  }
  llm = await startFakeLlm();
}, 420_000);

afterAll(async () => {
  await llm?.close();
  await registry?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
  // Removing every consumer project's node_modules (the global installs included) takes minutes when loaded.
}, 300_000);

interface Packument {
  readonly "dist-tags": Record<string, string>;
  readonly versions: Record<string, PublishedManifest>;
}
interface PublishedManifest {
  readonly private?: boolean;
  readonly engines?: { node?: string };
  readonly license?: string;
  readonly repository?: { url?: string; directory?: string };
  readonly dependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly dist: { tarball: string };
}

async function packument(name: string): Promise<{ status: number; body: Packument | undefined }> {
  const response = await fetch(new URL(name.replace("/", "%2f"), registry.url));
  return { status: response.status, body: response.ok ? ((await response.json()) as Packument) : undefined };
}

/** A fresh project in its own temp directory, outside the repo. */
function consumer(name: string): Consumer {
  return new Consumer(join(root, "consumers", name), registry.url);
}

/**
 * Runs every marked example of `readme` in `project`: as .mjs (types stripped) with `expected` matched against
 * its stdout, then all of them typechecked as strict .ts. Fails on any tsc error in the example or in our
 * published .d.ts.
 */
async function runReadmeExamples(
  project: Consumer,
  readme: string,
  expected: Readonly<Record<string, RegExp>>,
  env: Record<string, string> = {},
): Promise<void> {
  const examples = readmeExamples(join(REPO_ROOT, readme));
  expect(examples.map((example) => example.name).sort()).toEqual(Object.keys(expected).sort());
  for (const example of examples) {
    project.write(`${example.name}.ts`, example.code);
    const script = project.write(`${example.name}.mjs`, toJavaScript(example.code));
    const run = await project.node(script, [], env);
    expect(run.status, describeRun(`node ${example.name}.mjs (${readme})`, run)).toBe(0);
    expect(run.stdout).toMatch(expected[example.name] ?? /never/);
  }
  const typecheck = await project.typecheck();
  const errors = ownErrors(tscErrors(typecheck.stdout));
  expect(errors, describeRun(`tsc --noEmit (${readme} examples)`, typecheck)).toEqual([]);
}

describe("publishing with changesets to a local registry", () => {
  it("publishes every public package at its new version and nothing private", async () => {
    expect(PUBLIC.length).toBeGreaterThanOrEqual(17);
    for (const pkg of workspacePackages()) {
      const { status, body } = await packument(pkg.name);
      if (pkg.private) {
        expect(status, `${pkg.name} is private and must not be published`).toBe(404);
        continue;
      }
      expect(status, `${pkg.name} not in the registry`).toBe(200);
      expect(body?.["dist-tags"].latest).toBe(published.get(pkg.name));
    }
  });

  it("ships manifests a consumer can use: engines, license, repository, ^ ranges, no workspace: or catalog:", async () => {
    for (const pkg of PUBLIC) {
      const { body } = await packument(pkg.name);
      const manifest = body?.versions[published.get(pkg.name) ?? ""];
      expect(manifest, pkg.name).toBeDefined();
      expect(manifest?.engines?.node, pkg.name).toBe(">=22.19.0");
      expect(manifest?.license, pkg.name).toBe("MIT");
      expect(manifest?.repository?.directory, pkg.name).toBe(pkg.dir);
      for (const [name, range] of Object.entries({
        ...manifest?.dependencies,
        ...manifest?.peerDependencies,
      })) {
        expect(range, `${pkg.name} → ${name}`).not.toMatch(/^(workspace|catalog):/);
        if (name.startsWith("@agent-kernel/")) expect(range, `${pkg.name} → ${name}`).toMatch(/^\^/);
      }
    }
  });

  it("ships dist, the sources its maps point at, README and LICENSE in every tarball, and no tests", async () => {
    const dir = join(root, "tarballs");
    mkdirSync(dir, { recursive: true });
    for (const pkg of PUBLIC) {
      const { body } = await packument(pkg.name);
      const url = body?.versions[published.get(pkg.name) ?? ""]?.dist.tarball ?? "";
      const file = join(dir, `${pkg.dir.replace("/", "-")}.tgz`);
      const response = await fetch(url);
      expect(response.status, url).toBe(200);
      writeFileSync(file, Buffer.from(await response.arrayBuffer()));
      const entries = execFileSync("tar", ["-tzf", file], { encoding: "utf8" }).split("\n");
      for (const required of ["package/package.json", "package/README.md", "package/LICENSE"]) {
        expect(entries, `${pkg.name} lacks ${required}`).toContain(required);
      }
      expect(entries.some((entry) => entry.startsWith("package/dist/") && entry.endsWith(".d.ts"))).toBe(
        true,
      );
      expect(
        entries.filter((entry) => /\.test\.[jt]s$|\.test\.d\.ts$/.test(entry)),
        pkg.name,
      ).toEqual([]);
      // a bundled command ships every file its build listed; its maps point into the sources of the packages
      // it carries, which ship in their own tarballs
      const bundled = bundleOutputs(join(root, "scratch", pkg.dir)).map((output) => `package/dist/${output}`);
      for (const output of bundled) expect(entries, `${pkg.name} lacks ${output}`).toContain(output);
      // every other source map's source is in the tarball
      for (const map of entries.filter((entry) => entry.endsWith(".js.map") && !bundled.includes(entry))) {
        const source = map.replace(/^package\/dist\//, "package/src/").replace(/\.js\.map$/, ".ts");
        expect(entries, `${pkg.name}: ${map} points at ${source}`).toContain(source);
      }
    }
  });
});

describe("a third party installs single packages with plain npm", () => {
  it("tool-policy alone: its README example runs (.mjs) and typechecks (strict .ts)", async () => {
    const project = consumer("tool-policy");
    await project.install(["@agent-kernel/tool-policy", "@agent-kernel/config"]);
    expect(existsSync(join(project.dir, "node_modules", "@agent-kernel", "kernel"))).toBe(false);
    await runReadmeExamples(project, "packages/tool-policy/README.md", {
      "explain-policy": /web_search: blocked by tools\.deny[\s\S]*read: allowed by tools\.profile \(coding\)/,
    });
  });

  it("session-store alone: SQLite works with no compiler, the README example runs and typechecks", async () => {
    const project = consumer("session-store");
    await project.install(["@agent-kernel/session-store"]);
    expect(existsSync(join(project.dir, "node_modules", "pg"))).toBe(false);
    await runReadmeExamples(project, "packages/session-store/README.md", {
      "first-transcript": /^agent:main:main 1$/m,
    });
  });

  it("runtime-resolver: the README example runs and typechecks", async () => {
    const project = consumer("runtime-resolver");
    await project.install(["@agent-kernel/runtime-resolver", "@agent-kernel/config"]);
    await runReadmeExamples(project, "packages/runtime-resolver/README.md", {
      "resolve-runtime":
        /agent:main:telegram:direct:42 anthropic\/claude-sonnet-4-5 defaults\n\[ 'anthropic\/claude-sonnet-4-5', 'openai\/gpt-5' \]\nrate_limit /,
    });
  });

  it("kernel: the README example runs a real turn against an OpenAI-compatible server and typechecks", async () => {
    const project = consumer("kernel");
    await project.install(["@agent-kernel/kernel", "@agent-kernel/config", "@agent-kernel/session-store"]);
    llm.enqueue(reply("Hello from the model."));
    await runReadmeExamples(
      project,
      "packages/kernel/README.md",
      { "first-turn": /ok: Hello from the model\./ },
      { LLM_BASE_URL: llm.baseUrlFor("openai") },
    );
  });

  it("markdown and config: their README examples run and typecheck", async () => {
    const project = consumer("markdown-config");
    await project.install(["@agent-kernel/markdown", "@agent-kernel/config"]);
    await runReadmeExamples(project, "packages/markdown/README.md", {
      "chunk-and-scan": /"First paragraph of a streamed reply\."[\s\S]*start: 0, end: 14/,
    });
    await runReadmeExamples(project, "packages/config/README.md", {
      "parse-config": /anthropic\/claude-sonnet-4-5[\s\S]*agents\.defaults\.model/,
    });
  });

  it("channels-core alone: its README example runs a gateway's inbound path on TestChannel and typechecks", async () => {
    const project = consumer("channels-core");
    await project.install(["@agent-kernel/channels-core"]);
    expect(existsSync(join(project.dir, "node_modules", "@agent-kernel", "runtime-resolver"))).toBe(false);
    await runReadmeExamples(project, "packages/channels-core/README.md", {
      "channels-core":
        /^42: allow, .*\n7: deny, .*\n\[ '<b>agent:main:telegram:direct:42<\/b> heard: hi &lt;there&gt;' \]\n[\s\S]*messageId must be a string/,
    });
  });

  it("the agent CLI installed globally: --help, two real turns, and one line with exit 1 on a Node older than 22.19", async () => {
    const project = consumer("agent-global");
    const prefix = join(project.dir, "global");
    const install = await project.npm(["install", "--global", "--prefix", prefix, "@agent-kernel/agent"]);
    expect(install.status, describeRun("npm install -g @agent-kernel/agent", install)).toBe(0);
    const agent = join(prefix, "bin", "agent");
    const help = await project.run(agent, ["--help"]);
    expect(help.status, describeRun("agent --help", help)).toBe(0);
    expect(help.stdout).toMatch(/^Usage: agent /);

    // A real turn from the installed layout (the bundle's externals — pi, better-sqlite3, kysely — resolved from
    // what npm installed), against the fake LLM over HTTP, and a second turn that continues the session.
    const workspace = join(project.dir, "workspace");
    const stateDir = join(project.dir, "state");
    const configPath = join(project.dir, "agent.json5");
    mkdirSync(workspace, { recursive: true });
    writeFileSync(
      configPath,
      `{ models: { providers: { scripted: { baseUrl: ${JSON.stringify(llm.baseUrlFor("openai"))}, api: "openai-completions",
          models: [{ id: "m1", contextWindow: 32000, maxTokens: 4096 }] } } },
        agents: { defaults: { model: "scripted/m1", workspace: ${JSON.stringify(workspace)} } } }`,
    );
    const flags = ["--config", configPath, "--state-dir", stateDir];
    llm.enqueue(reply("Hello from the installed agent."));
    const first = await project.run(agent, ["-m", "hi", ...flags]);
    expect(first.status, describeRun("agent -m hi", first)).toBe(0);
    expect(first.stdout).toBe("Hello from the installed agent.\n");
    llm.enqueue(reply("Second turn."));
    const second = await project.run(agent, ["-m", "again", ...flags]);
    expect(second.status, describeRun("agent -m again", second)).toBe(0);
    expect(second.stdout).toBe("Second turn.\n");
    const runs = await project.run(agent, ["runs", "list", "--json", ...flags]);
    expect(JSON.parse(runs.stdout)).toHaveLength(2);

    // The machine's own Node, when it is older than the packages need (Node 20 here): a clear refusal.
    const systemNode = "/usr/bin/node";
    if (!existsSync(systemNode)) return;
    const version = execFileSync(systemNode, ["-p", "process.versions.node"], { encoding: "utf8" }).trim();
    const [major = 0, minor = 0] = version.split(".").map(Number);
    if (major > 22 || (major === 22 && minor >= 19)) return;
    const old = await project.run(systemNode, [agent, "--help"]);
    expect(old.status).toBe(1);
    expect(old.stdout).toBe("");
    expect(old.stderr).toBe(`agent: needs Node.js 22.19 or newer; this is Node.js ${version}\n`);
  });

  // Each app README's `npm install -g …` line, and the umbrella: `npm i -g @agent-kernel/cli` gives the same
  // `agent-kernel` command as `tooling/pnpm exec agent-kernel` in the repo.
  const GLOBAL_COMMANDS = {
    "@agent-kernel/cli": "agent-kernel",
    "@agent-kernel/auto-reply": "auto-reply",
    "@agent-kernel/cron": "agent-cron",
    "@agent-kernel/followup": "followup",
    "@agent-kernel/hybrid-planner": "hybrid-planner",
    "@agent-kernel/gateway": "agent-kernel-gateway",
  } as const;
  it("every app's command installed globally answers --help; agent-kernel reaches the apps", async () => {
    const project = consumer("apps-global");
    const prefix = join(project.dir, "global");
    // Only what this workspace publishes (an app still being written may not be a package yet).
    const commands = Object.entries(GLOBAL_COMMANDS).filter(([name]) => published.has(name));
    const names = commands.map(([name]) => name);
    const install = await project.npm(["install", "--global", "--prefix", prefix, ...names]);
    expect(install.status, describeRun(`npm install -g ${names.join(" ")}`, install)).toBe(0);
    for (const [name, bin] of commands) {
      const help = await project.run(join(prefix, "bin", bin), ["--help"]);
      expect(help.status, describeRun(`${bin} --help (${name})`, help)).toBe(0);
      expect(help.stdout).toMatch(/^Usage:/);
    }
    const umbrella = join(prefix, "bin", "agent-kernel");
    const version = await project.run(umbrella, ["--version"]);
    expect(version.stdout).toBe(`${published.get("@agent-kernel/cli")}\n`);
    const cronHelp = await project.run(umbrella, ["cron", "list", "--help"]);
    expect(cronHelp.status, describeRun("agent-kernel cron list --help", cronHelp)).toBe(0);
    expect(cronHelp.stdout).toContain("Usage: agent-cron");
    // several packages and their dependencies from the registry, on a loaded machine
  }, 600_000);
});

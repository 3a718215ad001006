// A third party's project: a fresh directory outside the repo, packages installed with plain npm (the
// project's Node 22 running npm, never the machine's older one) from the local registry, and code run and
// typechecked there as a consumer would. Owns: the consumer's manifest and strict tsconfig, the npm and tsc
// invocations, and reading tsc's findings. Does not own: the registry or what the examples say.
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { toolPath } from "./publish.ts";

const require = createRequire(import.meta.url);
export const NPM_CLI = join(dirname(require.resolve("npm/package.json")), "bin", "npm-cli.js");
const TSC = join(dirname(require.resolve("typescript/package.json")), "bin", "tsc");
/** The @types/node a consumer adds for Node 22 (a range, as a consumer would write it). */
const TYPES_NODE = "@types/node@^22.19.0";

/**
 * The consumer's compiler settings: strict, and `skipLibCheck: false` so our published .d.ts are checked
 * like the consumer's own code.
 */
export const CONSUMER_TSCONFIG = {
  compilerOptions: {
    target: "es2023",
    lib: ["es2023"],
    module: "nodenext",
    moduleResolution: "nodenext",
    types: ["node"],
    strict: true,
    skipLibCheck: false,
    noEmit: true,
  },
  include: ["*.ts"],
};

export interface RunResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function describeRun(what: string, result: RunResult): string {
  return `${what} exited with ${result.status}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

export class Consumer {
  readonly dir: string;
  readonly registryUrl: string;
  private readonly env: Record<string, string | undefined>;

  constructor(dir: string, registryUrl: string, extraPath: readonly string[] = []) {
    this.dir = dir;
    this.registryUrl = registryUrl;
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "package.json"),
      `${JSON.stringify({ name: "consumer", private: true, type: "module" }, null, 2)}\n`,
    );
    writeFileSync(join(dir, "tsconfig.json"), `${JSON.stringify(CONSUMER_TSCONFIG, null, 2)}\n`);
    // No user or project config of the machine: only the registry given, nothing else inherited.
    writeFileSync(join(dir, ".npmrc"), `registry=${registryUrl}\n`);
    const env: Record<string, string | undefined> = { ...process.env };
    for (const name of Object.keys(env)) {
      if (/^(npm|pnpm)_/i.test(name) || name === "NODE_OPTIONS" || name === "INIT_CWD") delete env[name];
    }
    this.env = {
      ...env,
      PATH: toolPath(...extraPath),
      npm_config_userconfig: join(dir, ".npmrc"),
      npm_config_registry: registryUrl,
      npm_config_update_notifier: "false",
      npm_config_fund: "false",
      npm_config_audit: "false",
    };
  }

  /** `npm <args>` in this project, with the project's Node. */
  npm(args: readonly string[]): Promise<RunResult> {
    return this.run(process.execPath, [NPM_CLI, ...args]);
  }

  /** `npm install <packages>` (and @types/node, for the typecheck) from the local registry. */
  async install(packages: readonly string[]): Promise<void> {
    const result = await this.npm([
      "install",
      "--no-package-lock",
      "--loglevel=error",
      ...packages,
      TYPES_NODE,
    ]);
    if (result.status !== 0) throw new Error(describeRun(`npm install ${packages.join(" ")}`, result));
  }

  /** Runs `file` in this project with the project's Node. */
  node(file: string, args: readonly string[] = [], env: Record<string, string> = {}): Promise<RunResult> {
    return this.run(process.execPath, [file, ...args], env);
  }

  /** `tsc --noEmit -p .` here, strict with skipLibCheck off. */
  typecheck(): Promise<RunResult> {
    return this.run(process.execPath, [TSC, "-p", join(this.dir, "tsconfig.json")]);
  }

  write(file: string, text: string): string {
    const path = join(this.dir, file);
    writeFileSync(path, text);
    return path;
  }

  /**
   * Runs a command here. Asynchronous on purpose: a server the test runs in its own process (the fake LLM)
   * must keep answering while the command waits for it.
   */
  run(command: string, args: readonly string[], env: Record<string, string> = {}): Promise<RunResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(command, [...args], {
        cwd: this.dir,
        env: { ...this.env, ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
      const timer = setTimeout(() => child.kill("SIGKILL"), 240_000);
      child.once("error", reject);
      child.once("close", (status) => {
        clearTimeout(timer);
        resolve({ status, stdout, stderr });
      });
    });
  }
}

/** tsc's error lines, each `file(line,col): error TSxxxx: ...`. */
export function tscErrors(output: string): string[] {
  return output.split("\n").filter((line) => /\): error TS\d+:/.test(line));
}

/**
 * The errors that are ours: in the consumer's own files or in our published .d.ts. A third-party library's
 * .d.ts failing under `skipLibCheck: false` is that library's business, and is reported apart.
 */
export function ownErrors(errors: readonly string[]): string[] {
  return errors.filter(
    (line) => !line.includes("node_modules/") || line.includes("node_modules/@agent-kernel/"),
  );
}

// A real npm registry on loopback for the round trip: Verdaccio in a child process with a temporary storage
// directory. Owns: its config (the @agent-kernel scope served only from what was published to it, every
// other package proxied to the registry npm itself uses), a free port, a user and token to publish with, and
// stopping it. Does not own: what is published (publish.ts) or installed (consumer.ts).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

export interface LocalRegistry {
  /** `http://127.0.0.1:<port>/` */
  readonly url: string;
  /** A token that may publish, for an `.npmrc` line `//127.0.0.1:<port>/:_authToken=<token>`. */
  readonly token: string;
  /** What Verdaccio printed, for a failure's message. */
  log(): string;
  stop(): Promise<void>;
}

const require = createRequire(import.meta.url);
const VERDACCIO_BIN = join(dirname(require.resolve("verdaccio/package.json")), "bin", "verdaccio");

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function configYaml(dir: string, uplink: string): string {
  // JSON is YAML: no YAML writer needed.
  return JSON.stringify({
    storage: join(dir, "storage"),
    auth: { htpasswd: { file: join(dir, "htpasswd"), max_users: 10 } },
    uplinks: { upstream: { url: uplink, timeout: "60s", max_fails: 5 } },
    packages: {
      // Ours come only from this registry: no proxy, so a name missing here is a 404, never the internet's.
      "@agent-kernel/*": { access: "$all", publish: "$authenticated", unpublish: "$authenticated" },
      "**": { access: "$all", publish: "$authenticated", proxy: "upstream" },
    },
    web: { enable: false },
    // Longer than any pause between the test's requests: an idle keep-alive socket the server closes under
    // a client's next request fails that request ("fetch failed").
    server: { keepAliveTimeout: 600 },
    max_body_size: "200mb",
    log: { type: "stdout", format: "pretty", level: "warn" },
  });
}

/**
 * Starts Verdaccio on 127.0.0.1 with its storage under `dir`, proxying third-party packages to `uplink`.
 * `caFile` is the certificate bundle npm itself trusts (its `cafile` setting), for an uplink reached through
 * a TLS-inspecting proxy; the system's CA store is trusted too (`--use-openssl-ca`), as curl and npm do.
 */
export async function startLocalRegistry(
  dir: string,
  uplink: string,
  caFile?: string | undefined,
): Promise<LocalRegistry> {
  mkdirSync(dir, { recursive: true });
  const configPath = join(dir, "verdaccio.yaml");
  writeFileSync(configPath, configYaml(dir, uplink));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  let output = "";
  const child: ChildProcess = spawn(
    process.execPath,
    ["--use-openssl-ca", VERDACCIO_BIN, "--config", configPath, "--listen", `127.0.0.1:${port}`],
    {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        NODE_OPTIONS: "",
        ...(caFile === undefined ? {} : { NODE_EXTRA_CA_CERTS: caFile }),
      },
    },
  );
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const killed = await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)]);
      if (!killed) child.kill("SIGKILL");
    }
    await exited;
  };

  try {
    await waitForPing(url, child, () => output);
    const token = await addUser(url);
    return { url, token, log: () => output, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function waitForPing(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`verdaccio exited with ${child.exitCode}:\n${log()}`);
    try {
      const response = await fetch(new URL("-/ping", url));
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`verdaccio did not answer ${url}-/ping within 60 s:\n${log()}`);
}

async function addUser(url: string): Promise<string> {
  const name = "roundtrip";
  const response = await fetch(new URL(`-/user/org.couchdb.user:${name}`, url), {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name, password: "roundtrip-password", type: "user", roles: [] }),
  });
  const body = (await response.json()) as { token?: string; error?: string };
  if (!response.ok || typeof body.token !== "string") {
    throw new Error(`adding a registry user failed: ${response.status} ${JSON.stringify(body)}`);
  }
  return body.token;
}

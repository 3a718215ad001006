// A throwaway PostgreSQL server for tests. Owns: finding the server programs (PATH, then
// /usr/lib/postgresql/*/bin, newest first), `initdb` into a temporary folder (trust auth, no fsync, the unix
// socket inside the folder), starting `postgres` on a free loopback port with `pg_ctl -w start`, creating a
// database per caller, and stopping and removing it all. Running as root (initdb refuses root), the programs
// run as the `postgres` user (else `nobody`) through `runuser`, and the folder is handed to that user.
// Does not own: the store (fixture.ts opens stores on it). Never touches a system service.
import { spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import pg from "pg";

export interface PostgresTestServer {
  readonly host: "127.0.0.1";
  readonly port: number;
  /** The folder holding the data dir, the log and the socket. */
  readonly dir: string;
  /** Superuser connection string for `database` (default `postgres`). */
  connectionString(database?: string): string;
  /** Creates a fresh database (a unique name unless given) and returns its connection string. */
  createDatabase(name?: string): Promise<string>;
  /** Stops the server (immediate shutdown) and removes its folder. Idempotent. */
  stop(): void;
}

export class PostgresNotInstalledError extends Error {
  override readonly name = "PostgresNotInstalledError";
}

const PROGRAMS = ["initdb", "pg_ctl", "postgres"] as const;

/** The folder holding initdb, pg_ctl and postgres (looked for in `path`, then `debian`/<version>/bin). */
export function findPostgresBin(path = process.env.PATH ?? "", debian = "/usr/lib/postgresql"): string {
  const candidates = path.split(delimiter).filter((dir) => dir !== "");
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    for (const version of versions) candidates.push(join(debian, version, "bin"));
  }
  for (const dir of candidates) {
    if (PROGRAMS.every((program) => existsSync(join(dir, program)))) return dir;
  }
  throw new PostgresNotInstalledError(
    `PostgreSQL server programs (${PROGRAMS.join(", ")}) were found neither on PATH nor in ${debian}/*/bin: ` +
      "install the Debian package `postgresql` (apt-get install postgresql) to run the PostgreSQL tests",
  );
}

/** The account the server runs as when this process is root (initdb refuses root). */
function serverAccount(): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const passwd = readFileSync("/etc/passwd", "utf8");
  for (const name of ["postgres", "nobody"]) {
    if (passwd.split("\n").some((line) => line.startsWith(`${name}:`))) return name;
  }
  throw new Error(
    "running as root, and neither a `postgres` nor a `nobody` account exists to run PostgreSQL as",
  );
}

function idsOf(account: string): { uid: number; gid: number } {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((entry) => entry.startsWith(`${account}:`));
  const [, , uid, gid] = line?.split(":") ?? [];
  return { uid: Number(uid), gid: Number(gid) };
}

function freePort(): Promise<number> {
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

const running = new Set<PostgresTestServer>();
let exitHookInstalled = false;

/** Starts a server; call `stop()` when done (a process exit stops any left running). */
export async function startPostgresServer(): Promise<PostgresTestServer> {
  const bin = findPostgresBin();
  const account = serverAccount();
  const run = (program: string, args: readonly string[]) => {
    const command = account === undefined ? join(bin, program) : "runuser";
    const fullArgs = account === undefined ? args : ["-u", account, "--", join(bin, program), ...args];
    return spawnSync(command, fullArgs, { encoding: "utf8" });
  };
  const dir = mkdtempSync(join(tmpdir(), "agent-kernel-pg-"));
  if (account !== undefined) {
    const { uid, gid } = idsOf(account);
    chownSync(dir, uid, gid);
  }
  const data = join(dir, "data");
  const init = run("initdb", [
    "-D",
    data,
    "-A",
    "trust",
    "-U",
    "postgres",
    "-E",
    "UTF8",
    "--locale=C",
    "--no-sync",
  ]);
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed (exit ${init.status}): ${init.stderr || init.stdout}`);
  }
  let lastError = "";
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const serverOptions = [
      `-k ${dir}`,
      "-h 127.0.0.1",
      `-p ${port}`,
      "-F",
      "-c full_page_writes=off",
      "-c max_connections=200",
    ].join(" ");
    const started = run("pg_ctl", [
      "-D",
      data,
      "-l",
      join(dir, "server.log"),
      "-w",
      "-t",
      "60",
      "-o",
      serverOptions,
      "start",
    ]);
    if (started.status !== 0) {
      lastError = `${started.stderr || started.stdout}\n${safeRead(join(dir, "server.log"))}`;
      continue;
    }
    let stopped = false;
    const server: PostgresTestServer = {
      host: "127.0.0.1",
      port,
      dir,
      connectionString: (database = "postgres") => `postgres://postgres@127.0.0.1:${port}/${database}`,
      createDatabase: async (name) => {
        const database = name ?? `test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
        const client = new pg.Client({ connectionString: server.connectionString() });
        await client.connect();
        try {
          await client.query(`CREATE DATABASE "${database.replaceAll('"', '""')}"`);
        } finally {
          await client.end();
        }
        return server.connectionString(database);
      },
      stop: () => {
        if (stopped) return;
        stopped = true;
        running.delete(server);
        run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
        rmSync(dir, { recursive: true, force: true });
      },
    };
    running.add(server);
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      const stopAll = () => {
        for (const left of [...running]) left.stop();
      };
      process.on("exit", stopAll);
      // A signal ends the process without "exit": stop the servers, then die of the signal as before.
      for (const signal of ["SIGINT", "SIGTERM"] as const) {
        process.once(signal, () => {
          stopAll();
          process.kill(process.pid, signal);
        });
      }
    }
    return server;
  }
  rmSync(dir, { recursive: true, force: true });
  throw new Error(`postgres did not start: ${lastError}`);
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

/** `psql`-free SQL for test set-up: one statement on a fresh connection. */
export async function runSql(
  connectionString: string,
  text: string,
  values: unknown[] = [],
): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

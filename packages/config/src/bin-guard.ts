// What every installed command of the project does before loading anything else (`agent`, `auto-reply`,
// `agent-cron`, `followup`, `hybrid-planner`, `agent-kernel-config`). Owns: refusing a Node.js older than the
// packages need (pi needs 22.19; keep equal to "engines" in the package manifests) with one line and exit 1,
// and treating a reader that closed the pipe (`… | head`) as the end of the output rather than an error.
// Does not own the commands. Imports nothing and uses no syntax newer than Node 18 knows, so an old Node
// reaches the line instead of a stack: a command imports this first, then its own entry dynamically.

/** The oldest Node.js the packages run on. */
export const REQUIRED_NODE = "22.19";

/** Exits with one line when this Node.js is older than REQUIRED_NODE; quiets closed stdout/stderr pipes. */
export function guardCommand(name: string): void {
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  const [needMajor = 0, needMinor = 0] = REQUIRED_NODE.split(".").map(Number);
  if (major < needMajor || (major === needMajor && minor < needMinor)) {
    process.stderr.write(
      `${name}: needs Node.js ${REQUIRED_NODE} or newer; this is Node.js ${process.versions.node}\n`,
    );
    process.exit(1);
  }
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE") throw error;
      process.exit(0);
    });
  }
}

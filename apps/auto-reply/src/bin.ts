#!/usr/bin/env node
// The installed `auto-reply` command. Owns: refusing a Node.js older than the packages need (pi needs
// 22.19; keep equal to "engines" in package.json) with one line and exit 1, before anything that would not
// load on it is imported: a static import would fail first, with a stack. Does not own: the command
// itself (main.ts).
const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  process.stderr.write(
    `auto-reply: needs Node.js 22.19 or newer; this is Node.js ${process.versions.node}\n`,
  );
  process.exit(1);
}
// A reader that stops early (`agent-kernel-config schema | head`) closes the pipe: not this command's error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    process.exit(0);
  });
}
await import("./main.ts");

// Resolve named functions from the bundled openclaw dist chunks (export aliases are mangled).
import fs from "node:fs";
import path from "node:path";
export const DIST = process.env.OPENCLAW_DIST;
let index;
function buildIndex() {
  index = new Map();
  for (const f of fs.readdirSync(DIST)) {
    if (!f.endsWith(".mjs")) continue;
    const src = fs.readFileSync(path.join(DIST, f), "utf8");
    const m = src.match(/export \{([^}]*)\};\s*$/m);
    if (!m) continue;
    for (const part of m[1].split(",")) {
      const mm = part.trim().match(/^(\S+)(?: as (\S+))?$/);
      if (!mm) continue;
      const name = mm[1],
        alias = mm[2] ?? mm[1];
      if (!index.has(name)) index.set(name, []);
      index.get(name).push({ file: f, alias, size: src.length });
    }
  }
}
export async function get(name, fileHint) {
  if (!index) buildIndex();
  let c = index.get(name);
  if (!c) throw new Error(`not exported: ${name}`);
  if (fileHint) c = c.filter((x) => x.file.includes(fileHint));
  c = [...c].sort((a, b) => a.size - b.size);
  const mod = await import(path.join(DIST, c[0].file));
  return mod[c[0].alias];
}
export function where(name) {
  if (!index) buildIndex();
  return index.get(name);
}

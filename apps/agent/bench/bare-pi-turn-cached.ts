// bare-pi-turn.ts with Node's on-disk compile cache on (`module.enableCompileCache()`, the OS temp dir unless
// NODE_COMPILE_CACHE names one), as the agent binary's src/main.ts enables it: first-text.bench.ts compares
// the two like for like. Enabled before the script loads pi, hence the dynamic import; the arguments are
// bare-pi-turn.ts's.
// Usage: node bench/bare-pi-turn-cached.ts <openai baseUrl> <workspace dir> [--stream] [--session <file>]
import { enableCompileCache } from "node:module";

enableCompileCache();
await import("./bare-pi-turn.ts");

import suites from "./streaming.bench.ts";

const suite = suites[0] as any;
const names: Record<string, string> = {
  "1": "ReplyStream, blocks + reasoning + final (partials off), 1 B deltas",
  "16": "ReplyStream, blocks + reasoning + final (partials off), 16 B deltas",
  "4096": "ReplyStream, blocks + reasoning + final (partials off), 4 KB deltas",
  ref: "reference: collect 1 B deltas into lines, no processing",
};
for (const size of (process.argv[2] ?? "1,16,4096").split(",")) {
  const c = suite.cases.find((x: any) => x.name === names[size]);
  const d = await c.before();
  const times: number[] = [];
  for (let i = 0; i < 15; i++) {
    const t = performance.now();
    c.run(d);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  console.log(size.padStart(5), "median", times[7]!.toFixed(1), "min", times[0]!.toFixed(1));
}

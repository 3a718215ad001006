// What validation costs on top of parsing: the example config through
// JSON5.parse alone (baseline) and through the whole parseConfigText.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { defineSuite } from "@agent-kernel/bench";
import JSON5 from "json5";
import { parseConfigText } from "../src/index.ts";

const example = readFileSync(
  join(import.meta.dirname, "..", "..", "..", "examples", "agent-kernel.config.json5"),
  "utf8",
);
const REPEAT = 200;

export default defineSuite({
  name: `load the example config ×${REPEAT}`,
  baseline: "JSON5.parse only",
  iterations: 10,
  itemsPerIteration: REPEAT,
  cases: [
    {
      name: "JSON5.parse only",
      run: () => {
        for (let i = 0; i < REPEAT; i++) JSON5.parse(example);
      },
    },
    {
      name: "parseConfigText (parse + env + validate + defaults)",
      run: () => {
        for (let i = 0; i < REPEAT; i++) parseConfigText(example, { env: {}, cpuCount: 2 });
      },
    },
  ],
});

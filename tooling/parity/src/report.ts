// The parity report: every scenario × app cell with its verdict, as JSON (`report/parity-report.json`, the
// full problems and notes) and Markdown (`report/parity-report.md`, a matrix a reviewer reads). Owns the
// report's format. Does not own the verdicts (run.ts).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { formatJson } from "./goldens.ts";
import type { CellResult, ParityScenario } from "./types.ts";

export const REPORT_DIR = join(import.meta.dirname, "..", "report");

const MARK: Readonly<Record<CellResult["status"], string>> = {
  pass: "pass",
  fail: "**FAIL**",
  "not wired": "not wired",
  "not applicable": "n/a",
};

export function reportMarkdown(
  scenarios: readonly ParityScenario[],
  apps: readonly string[],
  cells: readonly CellResult[],
): string {
  const lookup = new Map(cells.map((cell) => [`${cell.scenario}\u0000${cell.app}`, cell]));
  const count = (status: CellResult["status"]) => cells.filter((cell) => cell.status === status).length;
  const lines = [
    "# Parity report",
    "",
    `${scenarios.length} scenarios × ${apps.length} apps: ${count("pass")} pass, ${count("fail")} fail, ${count("not wired")} not wired, ${count("not applicable")} not applicable.`,
    "",
    `| scenario | covers | ${apps.join(" | ")} |`,
    `| --- | --- | ${apps.map(() => "---").join(" | ")} |`,
  ];
  for (const scenario of scenarios) {
    const row = apps.map((app) => MARK[lookup.get(`${scenario.name}\u0000${app}`)?.status ?? "not wired"]);
    lines.push(`| ${scenario.name} | ${scenario.covers.join(", ")} | ${row.join(" | ")} |`);
  }
  const notWired = [...new Set(cells.filter((cell) => cell.status === "not wired").map((cell) => cell.app))];
  if (notWired.length > 0) {
    lines.push("", "## Not wired", "");
    for (const app of notWired) {
      const why = cells.find((cell) => cell.app === app && cell.status === "not wired")?.notes[0] ?? "";
      lines.push(`- ${app}: ${why}`);
    }
  }
  const remarks = cells.filter(
    (cell) => cell.status !== "not wired" && (cell.problems.length > 0 || cell.notes.length > 0),
  );
  if (remarks.length > 0) {
    lines.push("", "## Problems and notes", "");
    for (const cell of remarks) {
      for (const problem of cell.problems)
        lines.push(`- ${cell.scenario} × ${cell.app}: ${problem.split("\n")[0]}`);
      for (const note of cell.notes) lines.push(`- ${cell.scenario} × ${cell.app} (note): ${note}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

export function writeReport(
  scenarios: readonly ParityScenario[],
  apps: readonly string[],
  cells: readonly CellResult[],
  dir: string = REPORT_DIR,
): { readonly markdown: string; readonly json: string } {
  mkdirSync(dir, { recursive: true });
  const markdown = join(dir, "parity-report.md");
  const json = join(dir, "parity-report.json");
  writeFileSync(markdown, reportMarkdown(scenarios, apps, cells));
  // Without timings, so the report changes only when a verdict does.
  const summary = cells.map(({ kernel: _kernel, delivered: _delivered, ms: _ms, ...rest }) => rest);
  writeFileSync(json, `${formatJson({ apps, scenarios: scenarios.map((s) => s.name), cells: summary })}\n`);
  return { markdown, json };
}

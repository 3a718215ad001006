// The `agent` command through its programmatic entry (`runAgentCli`, in process, the same code the binary
// runs): one invocation per inbound message with the cell's `--config` and `--state-dir`, no TTY and no
// `--json`, so what it delivers is the final text on stdout, a one-line error on stderr and the exit code,
// and one-line recovery notices on stderr (delivered as `notice`).
// Concurrent inbound runs one invocation after the other: each CLI process has its own kernel, so the
// kernel's lanes cannot serialise two processes (recorded as a note on the cell).
import { runAgentCli } from "@agent-kernel/agent";
import type { Cell } from "../cell.ts";
import { normaliseText } from "../kernel-outcome.ts";
import type { AppDeliveryPolicy, CellRun, Delivered } from "../types.ts";
import { type AppAdapter, abortWhenRequested } from "./adapter.ts";

/** The error report's form: `agent: run <id> ended <status> (…)` or `agent: run <id> failed: …` (the store). */
const ERROR_REPORT = /^agent: run \S+ /;

export const AGENT_POLICY: AppDeliveryPolicy = {
  app: "agent",
  streaming: "none",
  final: "all",
  errors: "stderr-and-exit-code",
  silent: "suppressed",
  messagingToolDedupe: true,
  replyThreading: false,
  typing: false,
  messageTool: false,
};

export const agentApp: AppAdapter = {
  name: "agent",
  policy: AGENT_POLICY,
  async run(cell: Cell): Promise<CellRun> {
    const delivered: Delivered[] = [];
    const notes: string[] = [];
    if (cell.scenario.inbound.some((message) => message.concurrentWithPrevious))
      notes.push("concurrent inbound ran one CLI invocation after the other (one kernel per process)");
    for (const inbound of cell.scenario.inbound) {
      let stdout = "";
      let stderr = "";
      const controller = new AbortController();
      const stopWatching = abortWhenRequested(cell, () => controller.abort());
      const code = await runAgentCli(
        ["-m", inbound.text, "--config", cell.configPath, "--state-dir", cell.stateDir],
        {
          stdout: { write: (text: string) => (stdout += text), isTTY: false },
          stderr: { write: (text: string) => (stderr += text) },
          env: {},
          cwd: cell.root,
        },
        controller.signal,
      );
      stopWatching();
      if (stdout !== "") delivered.push({ kind: "stdout", text: normaliseText(stdout, cell) });
      // The run's one-line error report (`agent: run <id> …`) is the policy's; the recovery notices before it
      // (a fallback switch, another auth profile, a Retry-After wait, a compaction) are progress, printed for
      // a run that succeeds too.
      const lines = normaliseText(stderr, cell)
        .split("\n")
        .filter((text) => text !== "");
      const report = lines.filter((text) => ERROR_REPORT.test(text));
      const notices = lines.filter((text) => !ERROR_REPORT.test(text));
      // A compaction notice's token count moves with every prompt or tool definition change, as the
      // record's `tokensBefore` does (normalised there too); the notice itself is what is compared.
      for (const text of notices)
        delivered.push({
          kind: "notice",
          text: text.replace(/\(\d+ tokens before\)/, "(<tokens> tokens before)"),
        });
      if (report.length > 0) delivered.push({ kind: "stderr", text: `${report.join("\n")}\n` });
      delivered.push({ kind: "exit", code });
    }
    return { stateDir: cell.stateDir, delivered, notes };
  },
};

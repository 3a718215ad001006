// `logs` over real pino-roll files: the last records, then (`--follow`) new ones as they are written — across a
// rotation to the next file — until the signal; pretty and coloured on a terminal, plain with NO_COLOR, the
// stored JSON with --json; `status` on a state dir without a gateway.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, type OnTestFinishedHandler } from "vitest";
import { runLogsCli, runStatusCli } from "./cli.ts";
import { logFiles, openGatewayLog } from "./log-files.ts";

function scratch(onTestFinished: (fn: OnTestFinishedHandler) => void): string {
  const dir = mkdtempSync(join(tmpdir(), "gateway-logs-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function capture(isTTY: boolean) {
  let text = "";
  return { stream: { write: (chunk: string) => (text += chunk), isTTY }, text: () => text };
}

async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("agent-kernel logs", () => {
  it("follows new records across a rotation, coloured on a terminal, until the signal (130)", async ({
    onTestFinished,
  }) => {
    const stateDir = scratch(onTestFinished);
    const log = await openGatewayLog({ stateDir, stderr: { write: () => true }, size: "1k" });
    log.info("before following", { event: "early" });
    const stdout = capture(true);
    const controller = new AbortController();
    const following = runLogsCli(["--follow", "--state-dir", stateDir], {
      stdout: stdout.stream,
      stderr: { write: () => true },
      env: {},
      cwd: stateDir,
      signal: controller.signal,
    });
    await until("the early record", () => stdout.text().includes("before following"));
    expect(stdout.text()).toContain("\u001b[32mINFO \u001b[0m before following");
    // more than 1 KB: pino-roll moves on to the next file
    for (let index = 0; index < 20; index++) log.info(`record ${index} ${"x".repeat(80)}`, { index });
    log.warn("after the rotation");
    await until("the record after the rotation", () => stdout.text().includes("after the rotation"));
    expect(logFiles(stateDir).length).toBeGreaterThan(1);
    for (let index = 0; index < 20; index++) expect(stdout.text()).toContain(`record ${index} `);
    controller.abort("SIGINT");
    expect(await following).toBe(130);
    await log.close();
  }, 60_000);

  it("prints the last --lines records: plain with NO_COLOR, stored JSON with --json", async ({
    onTestFinished,
  }) => {
    const stateDir = scratch(onTestFinished);
    const log = await openGatewayLog({ stateDir, stderr: { write: () => true } });
    for (let index = 0; index < 5; index++) log.info(`line ${index}`, { index });
    await log.close();
    const io = (stream: ReturnType<typeof capture>, env: Record<string, string>) => ({
      stdout: stream.stream,
      stderr: { write: () => true },
      env,
      cwd: stateDir,
    });
    const plain = capture(true);
    expect(await runLogsCli(["--lines", "2", "--state-dir", stateDir], io(plain, { NO_COLOR: "1" }))).toBe(0);
    expect(plain.text()).toMatch(/^\S+ INFO {2}line 3 index=3\n\S+ INFO {2}line 4 index=4\n$/);
    const json = capture(true);
    expect(await runLogsCli(["--json", "--state-dir", stateDir], io(json, {}))).toBe(0);
    const records = json
      .text()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { msg: string; index: number; level: number });
    expect(records.map((record) => record.msg)).toEqual(["line 0", "line 1", "line 2", "line 3", "line 4"]);
    expect(records[0]).toMatchObject({ level: 30, index: 0 });

    const status = capture(false);
    expect(await runStatusCli(["--json", "--state-dir", stateDir], io(status, {}))).toBe(1);
    expect(JSON.parse(status.text())).toMatchObject({ running: false, queue: { pending: 0, claimed: 0 } });
    const bad = capture(false);
    let stderr = "";
    expect(
      await runLogsCli(["--lines", "many", "--state-dir", stateDir], {
        ...io(bad, {}),
        stderr: { write: (text: string) => (stderr += text) },
      }),
    ).toBe(2);
    expect(stderr).toBe('agent-kernel logs: --lines expects a whole number, got "many"\n');
  }, 60_000);
});

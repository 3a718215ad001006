// Skill folders in a sandbox: each loaded skill's folder read-only under /skills, nothing beside it, through the
// real bubblewrap engine.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBwrapEngine } from "./bwrap-engine.ts";
import { scrubEnvironment } from "./environment.ts";
import { ensureSandboxWorkspace, SANDBOX_WORKSPACE_PATH, SKILLS_PATH, skillFolderMounts } from "./layout.ts";
import type { SandboxMount } from "./types.ts";

describe("skillFolderMounts", () => {
  it("mounts each folder read-only at /skills/<name>, once, with safe and distinct names", () => {
    const { mounts, pathInside } = skillFolderMounts([
      "/state/skills/weather",
      "/extra/weather",
      "/state/skills/weather/",
      "/odd/na me:!",
      "/dots/..",
    ]);
    expect(mounts).toEqual([
      { path: "/skills/weather", hostPath: "/state/skills/weather", writable: false },
      { path: "/skills/weather-2", hostPath: "/extra/weather", writable: false },
      { path: "/skills/na_me_", hostPath: "/odd/na me:!", writable: false },
      { path: "/skills/skill", hostPath: "/", writable: false },
    ]);
    expect(pathInside.get("/extra/weather")).toBe("/skills/weather-2");
    expect(SKILLS_PATH).toBe("/skills");
  });
});

describe("skill folders in a bwrap sandbox", async () => {
  const engine = createBwrapEngine({ standby: false });
  const status = await engine.probe();
  let root: string;
  let workspace: string;
  let managed: string;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "sandbox-skills-"));
    chmodSync(root, 0o755);
    workspace = ensureSandboxWorkspace(join(root, "workspace"));
    managed = join(root, "managed");
    mkdirSync(join(managed, "weather"), { recursive: true });
    mkdirSync(join(managed, "not-a-skill"), { recursive: true });
    chmodSync(managed, 0o755);
    writeFileSync(join(managed, "weather", "SKILL.md"), "---\nname: weather\n---\nUse the forecast.\n");
    writeFileSync(join(managed, "not-a-skill", "secret.txt"), "next door\n");
    writeFileSync(join(managed, "loose.txt"), "in the managed folder itself\n");
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const run = async (command: string, mounts: readonly SandboxMount[]) => {
    let output = "";
    const result = await engine.run({
      command,
      cwd: SANDBOX_WORKSPACE_PATH,
      env: scrubEnvironment(process.env, { allow: ["PATH"] }),
      mounts: [{ path: SANDBOX_WORKSPACE_PATH, hostPath: workspace, writable: true }, ...mounts],
      network: false,
      limits: {
        timeoutMs: 30_000,
        maxOutputBytes: 64 * 1024,
        memoryBytes: 256 * 1024 * 1024,
        maxProcesses: 32,
        maxFileBytes: 1024 * 1024,
        tmpBytes: 8 * 1024 * 1024,
      },
      onData: (chunk) => {
        output += chunk.toString("utf8");
      },
    });
    return { exitCode: result.exitCode, output };
  };

  it.skipIf(!status.available)(
    "reads the skill's SKILL.md, cannot write it, and sees nothing of the folder it sits in",
    async () => {
      const { mounts } = skillFolderMounts([join(managed, "weather")]);
      const read = await run("cat /skills/weather/SKILL.md", mounts);
      expect(read).toEqual({ exitCode: 0, output: expect.stringContaining("Use the forecast.") });
      const write = await run("echo changed > /skills/weather/SKILL.md", mounts);
      expect(write.exitCode).not.toBe(0);
      const around = await run(
        `ls /skills; cat ${join(managed, "loose.txt")} ${join(managed, "not-a-skill", "secret.txt")} /skills/not-a-skill/secret.txt`,
        mounts,
      );
      expect(around.exitCode).not.toBe(0);
      expect(around.output).toMatch(/^weather\n/);
      expect(around.output).not.toContain("next door");
      expect(around.output).not.toContain("in the managed folder itself");
    },
    60_000,
  );
});

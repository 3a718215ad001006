// withSkillFolders: which skill folders a turn's view gains, and the catalog's locations in a sandbox.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { formatSkillsCatalog } from "../skills/prompt.ts";
import { hostToolSandbox, type ToolSandbox, withSkillFolders } from "./tool-sandbox.ts";

const root = mkdtempSync(join(tmpdir(), "tool-sandbox-skills-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const workspace = join(root, "workspace");
const managed = join(root, "state", "skills");
for (const dir of [join(workspace, "skills", "local"), join(managed, "a&b")]) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "SKILL.md"), "---\nname: x\ndescription: y\n---\n");
}
const skills = [
  {
    name: "local",
    description: "in the workspace",
    filePath: join(workspace, "skills", "local", "SKILL.md"),
  },
  { name: "a&b", description: "managed", filePath: join(managed, "a&b", "SKILL.md") },
  { name: "gone", description: "removed since the snapshot", filePath: join(managed, "gone", "SKILL.md") },
];
const snapshot = { skills, prompt: formatSkillsCatalog(skills).prompt };

describe("withSkillFolders", () => {
  it("unsandboxed: adds the folders outside the workspace, read-only, and keeps the catalog", () => {
    const host = hostToolSandbox(workspace);
    const { sandbox, skillsPrompt } = withSkillFolders(host, snapshot);
    // A removed skill's folder is left out (nothing to read there).
    expect(sandbox.mounts).toEqual([
      ...host.mounts,
      { path: join(managed, "a&b"), hostPath: join(managed, "a&b"), writable: false },
    ]);
    expect(skillsPrompt).toBe(snapshot.prompt);
    // The next turn of the session gets the same answer (from the cache), its own sandbox object untouched.
    const again = withSkillFolders(hostToolSandbox(workspace), snapshot);
    expect(again.sandbox.mounts).toEqual(sandbox.mounts);
    expect(host.mounts).toHaveLength(1);
  });

  it("sandboxed: mounts every existing folder under /skills and moves the catalog's locations there", () => {
    const boxed: ToolSandbox = {
      ...hostToolSandbox(workspace),
      sandboxed: true,
      cwd: "/workspace",
      mounts: [{ path: "/workspace", hostPath: join(root, "box"), writable: true }],
    };
    const { sandbox, skillsPrompt } = withSkillFolders(boxed, snapshot);
    expect(sandbox.mounts.slice(1)).toEqual([
      { path: "/skills/local", hostPath: join(workspace, "skills", "local"), writable: false },
      { path: "/skills/a_b", hostPath: join(managed, "a&b"), writable: false },
    ]);
    expect(skillsPrompt).toContain("<location>/skills/local/SKILL.md</location>");
    expect(skillsPrompt).toContain("<location>/skills/a_b/SKILL.md</location>");
    expect(skillsPrompt).not.toContain(`<location>${workspace}`);
    // A removed skill keeps its (unreadable) host path rather than a mount that would break every command.
    expect(skillsPrompt).toContain(`<location>${join(managed, "gone", "SKILL.md")}</location>`);
  });

  it("sandboxed with the agent workspace mounted: a workspace skill is named there, never bound again", () => {
    const secret = join(root, "secret");
    mkdirSync(secret, { recursive: true });
    writeFileSync(join(secret, "SKILL.md"), "private\n");
    // What a sandboxed command could plant in the writable workspace between turns: a link to a host folder.
    symlinkSync(secret, join(workspace, "skills", "planted"));
    const planted = {
      name: "planted",
      description: "d",
      filePath: join(workspace, "skills", "planted", "SKILL.md"),
    };
    const withPlanted = [...skills, planted];
    const rw: ToolSandbox = {
      ...hostToolSandbox(workspace),
      sandboxed: true,
      cwd: "/workspace",
      mounts: [{ path: "/workspace", hostPath: workspace, writable: true }],
    };
    const { sandbox, skillsPrompt } = withSkillFolders(rw, {
      skills: withPlanted,
      prompt: formatSkillsCatalog(withPlanted).prompt,
    });
    expect(sandbox.mounts.slice(1)).toEqual([
      { path: "/skills/a_b", hostPath: join(managed, "a&b"), writable: false },
    ]);
    expect(sandbox.mounts.some((mount) => mount.hostPath === secret)).toBe(false);
    expect(skillsPrompt).toContain("<location>/workspace/skills/local/SKILL.md</location>");
    expect(skillsPrompt).toContain("<location>/workspace/skills/planted/SKILL.md</location>");
    expect(skillsPrompt).toContain("<location>/skills/a_b/SKILL.md</location>");
  });

  it("a skill folder that is a link (swapped in after the skills were loaded) is neither bound nor added", () => {
    const elsewhere = join(root, "home-of-someone");
    mkdirSync(elsewhere, { recursive: true });
    writeFileSync(join(elsewhere, "secret.txt"), "not for the model");
    const linked = join(managed, "linked");
    symlinkSync(elsewhere, linked);
    const withLink = [
      ...skills.slice(0, 2),
      { name: "linked", description: "a link now", filePath: join(linked, "SKILL.md") },
    ];
    const linkSnapshot = { skills: withLink, prompt: formatSkillsCatalog(withLink).prompt };
    const host = withSkillFolders(hostToolSandbox(workspace), linkSnapshot);
    expect(host.sandbox.mounts.map((mount) => mount.hostPath)).not.toContain(elsewhere);
    expect(host.sandbox.mounts.map((mount) => mount.path)).not.toContain(linked);
    const boxed: ToolSandbox = {
      ...hostToolSandbox(workspace),
      sandboxed: true,
      cwd: "/workspace",
      mounts: [{ path: "/workspace", hostPath: join(root, "box"), writable: true }],
    };
    const inBox = withSkillFolders(boxed, linkSnapshot);
    expect(inBox.sandbox.mounts.map((mount) => mount.hostPath)).not.toContain(elsewhere);
    expect(inBox.sandbox.mounts.map((mount) => mount.hostPath)).not.toContain(linked);
    expect(inBox.sandbox.mounts.map((mount) => mount.path)).toContain("/skills/a_b");
  });

  it("a session without skills gets its sandbox unchanged", () => {
    const host = hostToolSandbox(workspace);
    expect(withSkillFolders(host, { skills: [], prompt: "" }).sandbox).toBe(host);
  });
});

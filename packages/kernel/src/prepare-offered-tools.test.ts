// The run's explained tool decisions name exactly the tools the executor offers that turn's model: the memory
// tools when the agent's memory is on, apply_patch and web_fetch unless the config leaves them out.
import { afterEach, describe, expect, it } from "vitest";
import { createKernelHarness, type KernelHarness } from "../test/harness.ts";

let h: KernelHarness;
afterEach(async () => {
  await h.close();
});

const explained = async (agentId: string): Promise<string[]> =>
  (await h.kernel.prepareSession({ agentId })).toolDecisions.map((decision) => decision.tool);

describe("prepareSession: the explained decisions cover the offered tools", () => {
  it("names memory_search and memory_get for an agent with memory on, and not for one without", async () => {
    h = await createKernelHarness({
      config: {
        agents: {
          list: [
            { id: "main", default: true },
            { id: "recall", memorySearch: { enabled: true } },
          ],
        },
      },
    });
    const plain = await explained("main");
    expect(plain).not.toContain("memory_search");
    expect(plain).not.toContain("memory_get");
    expect(plain).toEqual(expect.arrayContaining(["read", "exec", "web_fetch", "apply_patch", "message"]));

    const recall = await h.kernel.prepareSession({ agentId: "recall" });
    const names = recall.toolDecisions.map((decision) => decision.tool);
    expect(names).toEqual(expect.arrayContaining(["memory_search", "memory_get"]));
    expect(names.filter((name) => !plain.includes(name)).sort()).toEqual(["memory_get", "memory_search"]);
    expect(recall.toolDecisions.find((decision) => decision.tool === "memory_search")).toMatchObject({
      allowed: true,
    });
  });

  it("leaves out apply_patch and web_fetch when the config turns them off", async () => {
    h = await createKernelHarness({
      config: { tools: { exec: { applyPatch: { enabled: false } }, web: { fetch: { enabled: false } } } },
    });
    const names = await explained("main");
    expect(names).not.toContain("apply_patch");
    expect(names).not.toContain("web_fetch");
    expect(names).toContain("read");
  });
});

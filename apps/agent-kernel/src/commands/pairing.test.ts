// `agent-kernel pairing` against the real kernel store: a stranger's pending request (made the way the
// gateway makes it, channels-core's PairingStore.challenge) is listed, a wrong code is refused with exit 3,
// the right one approves the sender (whom the store then knows as paired), and deny drops a pending request
// or revokes an approved sender.
import { PairingStore } from "@agent-kernel/channels-core";
import { openKernelStore } from "@agent-kernel/kernel";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../../test/harness.ts";
import { EXIT } from "../errors.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness(
    'channels: { telegram: { enabled: true, botToken: "123456:TEST-token", dmPolicy: "pairing" } },',
  );
}, 60_000);
afterAll(async () => {
  await h?.close();
});

/** A pending request with a known code, as the gateway would record it for a stranger. */
async function strangerWrites(senderId: string, code: string): Promise<void> {
  const store = await openKernelStore({ stateDir: h.stateDir });
  try {
    const pairing = new PairingStore(store.channelState, { generateCode: () => code });
    const challenge = await pairing.challenge("telegram", "default", {
      id: senderId,
      username: `user${senderId}`,
    });
    expect(challenge).toMatchObject({ status: "created", code });
  } finally {
    await store.close();
  }
}

async function isPaired(senderId: string): Promise<boolean> {
  const store = await openKernelStore({ stateDir: h.stateDir });
  try {
    return await new PairingStore(store.channelState).isPaired("telegram", "default", senderId);
  } finally {
    await store.close();
  }
}

describe("agent-kernel pairing", () => {
  it("lists a pending request, refuses a wrong code, approves the right one", async () => {
    await strangerWrites("5550001", "K7QX2M9P");
    const listed = await h.run(["pairing", "list", "--json"]);
    expect(listed.code).toBe(EXIT.ok);
    const [telegram] = JSON.parse(listed.stdout).channels;
    expect(telegram).toMatchObject({ channel: "telegram", accountId: "default", approved: [] });
    expect(telegram.pending).toMatchObject([
      { senderId: "5550001", code: "K7QX2M9P", username: "user5550001" },
    ]);

    const wrong = await h.run(["pairing", "approve", "telegram", "AAAABBBB"]);
    expect(wrong.code).toBe(EXIT.notFound);
    expect(wrong.stderr).toMatch(
      /no pending request on telegram \(account default\) has code "AAAABBBB" \(4 wrong code\(s\) left/,
    );
    expect(await isPaired("5550001")).toBe(false);

    const right = await h.run(["pairing", "approve", "telegram", "k7qx-2m9p"]);
    expect(right.stderr).toBe("");
    expect(right.code).toBe(EXIT.ok);
    expect(right.stdout).toBe("Approved 5550001 (@user5550001) on telegram: they can talk to the bot now.\n");
    expect(await isPaired("5550001")).toBe(true);
    const after = await h.run(["pairing", "list", "telegram"]);
    expect(after.stdout).toMatch(/pending: none\n {2}approved 5550001 \(@user5550001\) {2}since /);
  });

  it("deny drops a pending request by its code, and revokes an approved sender by id", async () => {
    await strangerWrites("5550002", "ZZZZ2222");
    const denied = await h.run(["pairing", "deny", "telegram", "ZZZZ2222"]);
    expect(denied.code).toBe(EXIT.ok);
    expect(JSON.parse((await h.run(["pairing", "list", "--json"])).stdout).channels[0].pending).toEqual([]);
    // the code is gone: approving it now fails
    expect((await h.run(["pairing", "approve", "telegram", "ZZZZ2222"])).code).toBe(EXIT.notFound);

    expect((await h.run(["pairing", "deny", "telegram", "5550001"])).code).toBe(EXIT.ok);
    expect(await isPaired("5550001")).toBe(false);
    const nothing = await h.run(["pairing", "deny", "telegram", "5550001"]);
    expect(nothing.code).toBe(EXIT.notFound);
  });

  it("an unknown channel or a missing argument is a usage error naming it", async () => {
    const unknown = await h.run(["pairing", "approve", "telegrm", "K7QX2M9P"]);
    expect(unknown.code).toBe(EXIT.usage);
    expect(unknown.stderr).toBe(
      'agent-kernel: no channel "telegrm" in the config; did you mean "telegram"? (configured: telegram)\n',
    );
    const missing = await h.run(["pairing", "approve", "telegram"]);
    expect(missing.code).toBe(EXIT.usage);
    expect(missing.stderr).toContain("pairing approve takes <channel> <code>");
  });
});

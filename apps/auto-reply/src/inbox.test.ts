// The inbox's files are the owner's alone: the folders are created 0700 and each accepted message 0600 under
// any umask; an older install's 0755 folders and 0644 entries (waiting or set aside) are tightened when the
// gateway opens the inbox; the entries still replay in arrival order.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { InboundMessage } from "@agent-kernel/channels-core";
import { afterEach, describe, expect, it } from "vitest";
import { Inbox } from "./inbox.ts";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A state dir's parent that is not itself private, so nothing passes by inheriting it. */
function parent(): string {
  const root = mkdtempSync(join(tmpdir(), "auto-reply-inbox-"));
  roots.push(root);
  chmodSync(root, 0o755);
  return root;
}

function mode(path: string): string {
  return `0${(statSync(path).mode & 0o777).toString(8)}`;
}

function message(text: string, messageId: string): InboundMessage {
  return {
    channel: "test",
    accountId: "default",
    messageId,
    conversation: { chatType: "direct", chatId: "u1" },
    sender: { id: "u1" },
    text,
    media: [],
    mentions: [],
    mentionsBot: false,
    timestamp: 1,
  };
}

function withUmask<T>(mask: number, run: () => T): T {
  const previous = process.umask(mask);
  try {
    return run();
  } finally {
    process.umask(previous);
  }
}

describe("the inbox at rest", () => {
  it("creates the state dir, auto-reply/ and inbox/ 0700 and each message 0600, even under umask 0000", () => {
    const stateDir = join(parent(), "state");
    const inbox = withUmask(0o000, () => {
      const created = new Inbox(stateDir);
      created.accept(message("my token is sk-live-123", "m1"), true);
      return created;
    });
    const files = readdirSync(inbox.dir);
    expect(files).toHaveLength(1);
    expect({
      stateDir: mode(stateDir),
      autoReply: mode(join(stateDir, "auto-reply")),
      inbox: mode(inbox.dir),
      entry: mode(join(inbox.dir, files[0] ?? "")),
    }).toEqual({ stateDir: "0700", autoReply: "0700", inbox: "0700", entry: "0600" });
  });

  it("tightens an older install's 0755 folders and 0644 entries on open, and still replays them in order", () => {
    const stateDir = join(parent(), "state");
    const dir = join(stateDir, "auto-reply", "inbox");
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    for (const folder of [stateDir, join(stateDir, "auto-reply"), dir]) chmodSync(folder, 0o755);
    const first = join(dir, "000000000000001-000000001-aaaaaaaa.json");
    const second = join(dir, "000000000000002-000000002-bbbbbbbb.json");
    const setAside = join(dir, "000000000000000-000000000-cccccccc.json.bad");
    writeFileSync(
      first,
      JSON.stringify({ version: 1, message: message("first", "m1"), senderIsOwner: true }),
    );
    writeFileSync(second, JSON.stringify({ version: 1, message: message("second", "m2") }));
    writeFileSync(setAside, "{ not json");
    for (const file of [first, second, setAside]) chmodSync(file, 0o644);

    const inbox = new Inbox(stateDir);
    expect([mode(stateDir), mode(join(stateDir, "auto-reply")), mode(dir)]).toEqual(["0700", "0700", "0700"]);
    const pending = inbox.pending();
    expect(pending.map((entry) => [entry.message.text, entry.senderIsOwner])).toEqual([
      ["first", true],
      ["second", false],
    ]);
    expect([mode(first), mode(second), mode(setAside)]).toEqual(["0600", "0600", "0600"]);
  });

  it("sets a bad entry aside owner-only", () => {
    const stateDir = join(parent(), "state");
    const inbox = new Inbox(stateDir);
    const bad = join(inbox.dir, "000000000000001-000000001-broken.json");
    writeFileSync(bad, "{ not json");
    chmodSync(bad, 0o644);
    const problems: string[] = [];
    expect(inbox.pending((file) => problems.push(file))).toEqual([]);
    expect(problems).toEqual([bad]);
    expect(mode(`${bad}.bad`)).toBe("0600");
  });
});

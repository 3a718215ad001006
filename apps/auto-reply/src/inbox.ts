// The gateway's durable inbox: an inbound message is accepted once it is a file under
// `<stateDir>/auto-reply/inbox/` (written to a temporary name, fsynced, then renamed, so a crash leaves either
// the whole message or nothing), and removed once its turn has an outcome. On start the gateway replays what
// is left, in arrival order: a message accepted before a shutdown or crash is never lost. Messages are the
// users' words (and whatever secrets they pasted): the folders are owner-only (0700, an older install's
// tightened) and every file is created 0600 (the store's private-files rule, through the kernel). Owns the file format and its ordering. Does not
// own deciding what to do with a message (gateway.ts).
import { randomUUID } from "node:crypto";
import {
  closeSync,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import type { InboundMessage } from "@agent-kernel/channels-core";
import { ensurePrivateDir, PRIVATE_FILE_MODE, tightenFile } from "@agent-kernel/kernel";

export interface InboxEntry {
  readonly id: string;
  readonly message: InboundMessage;
  /** The access decision made when the message was accepted (replays do not decide again). */
  readonly senderIsOwner: boolean;
}

interface StoredEntry {
  readonly version: 1;
  readonly message: InboundMessage;
  readonly senderIsOwner?: boolean;
}

/** The raw channel payload is not kept: it may not be JSON, and nothing downstream reads it. */
function storable(message: InboundMessage): InboundMessage {
  const { raw: _raw, ...rest } = message;
  return rest;
}

export class Inbox {
  readonly dir: string;
  #sequence = 0;

  constructor(stateDir: string) {
    this.dir = join(stateDir, "auto-reply", "inbox");
    ensurePrivateDir(this.dir, stateDir);
  }

  /** Stores the message durably; resolves to its entry id (file names sort in arrival order). */
  accept(message: InboundMessage, senderIsOwner: boolean): InboxEntry {
    this.#sequence += 1;
    const id = `${Date.now().toString().padStart(15, "0")}-${this.#sequence.toString().padStart(9, "0")}-${randomUUID().slice(0, 8)}`;
    const entry: StoredEntry = { version: 1, message: storable(message), senderIsOwner };
    const temporary = join(this.dir, `.${id}.tmp`);
    const fd = openSync(temporary, "w", PRIVATE_FILE_MODE);
    try {
      writeSync(fd, JSON.stringify(entry));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, join(this.dir, `${id}.json`));
    return { id, message: entry.message, senderIsOwner };
  }

  /** The message's turn has an outcome (answered, failed, or recorded as interrupted). */
  done(id: string): void {
    rmSync(join(this.dir, `${id}.json`), { force: true });
  }

  /**
   * Every stored message, oldest first. A file that cannot be read as an entry is moved aside to
   * `<name>.bad` (reported through `onBad`) rather than deleted: bad input never loses data.
   */
  pending(onBad: (file: string, problem: string) => void = () => {}): InboxEntry[] {
    const entries: InboxEntry[] = [];
    for (const name of readdirSync(this.dir).sort()) {
      if (name.startsWith(".") && name.endsWith(".tmp")) {
        // A write that never completed: the channel was not told it was accepted.
        rmSync(join(this.dir, name), { force: true });
        continue;
      }
      const file = join(this.dir, name);
      // An older install wrote entries 0644: one still waiting (or set aside) is tightened before it is read.
      tightenFile(file);
      if (!name.endsWith(".json")) continue;
      try {
        const parsed = JSON.parse(readFileSync(file, "utf8")) as Partial<StoredEntry>;
        const message = parsed.message;
        if (parsed.version !== 1 || typeof message !== "object" || message === null)
          throw new Error("not an inbox entry (version 1 with a message)");
        if (typeof message.channel !== "string" || typeof message.messageId !== "string")
          throw new Error("the message has no channel or messageId");
        entries.push({
          id: name.slice(0, -".json".length),
          message,
          senderIsOwner: parsed.senderIsOwner === true,
        });
      } catch (error) {
        renameSync(file, `${file}.bad`);
        onBad(file, error instanceof Error ? error.message : String(error));
      }
    }
    return entries;
  }
}

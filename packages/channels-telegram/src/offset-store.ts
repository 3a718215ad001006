// Where the polling position survives a restart. `OffsetStore` is the next `getUpdates` offset (saved only
// after the inbound handler resolved for every earlier update) plus, optionally, the ids of updates whose
// handler resolved but whose offset may not be saved yet: on a crash between the two writes the next start
// re-fetches those updates and skips them, so the handler never sees one twice. Implementations: memory,
// a JSON file (write to a temporary file then rename, so a crash leaves the old or the new state, never a
// torn one; created owner-only: the file 0600, a folder it creates 0700), and the session store's
// channel-state table (reached through a structural interface, as the layer rules keep channels-* from
// importing session-store). Does not own the polling loop (polling.ts).
import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { ChannelError } from "@agent-kernel/channels-core";
import { CHANNEL_ID } from "./bot-api.ts";

export interface OffsetStore {
  /** The next update id to ask for; undefined on the first start. */
  load(): Promise<number | undefined>;
  /** Saves the next offset; forgets handled ids below it. */
  save(offset: number): Promise<void>;
  /** Update ids handled but maybe not yet covered by the saved offset (dedupe across a crash). */
  loadHandled?(): Promise<readonly number[]>;
  /** Records that the handler resolved for this update, before the offset moves past it. */
  markHandled?(updateId: number): Promise<void>;
  /**
   * Binds the saved position to a bot (update ids are per bot): false when it belonged to another bot, in
   * which case the position is cleared (a new token for another bot must not skip that bot's updates).
   */
  claimForBot?(botId: number): Promise<boolean>;
}

interface PollState {
  offset?: number;
  handled: number[];
  botId?: number;
}

/** The state after binding it to `botId`, and whether the saved position survived. */
function claimed(state: PollState, botId: number): { state: PollState; kept: boolean } {
  if (state.botId === botId) return { state, kept: true };
  if (state.botId === undefined) return { state: { ...state, botId }, kept: true };
  return { state: { handled: [], botId }, kept: false };
}

function withHandled(state: PollState, updateId: number): PollState {
  return state.handled.includes(updateId) ? state : { ...state, handled: [...state.handled, updateId] };
}

function withOffset(state: PollState, offset: number): PollState {
  return {
    offset,
    handled: state.handled.filter((id) => id >= offset),
    ...(state.botId === undefined ? {} : { botId: state.botId }),
  };
}

/** Lives as long as the process: right for tests and for a bot that must not resume after a restart. */
export function memoryOffsetStore(initial?: number): OffsetStore & { readonly state: Readonly<PollState> } {
  let state: PollState = initial === undefined ? { handled: [] } : { offset: initial, handled: [] };
  return {
    get state() {
      return state;
    },
    load: async () => state.offset,
    save: async (offset) => {
      state = withOffset(state, offset);
    },
    loadHandled: async () => state.handled,
    markHandled: async (updateId) => {
      state = withHandled(state, updateId);
    },
    claimForBot: async (botId) => {
      const result = claimed(state, botId);
      state = result.state;
      return result.kept;
    },
  };
}

function parsePollState(text: string, path: string): PollState {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ChannelError(
      CHANNEL_ID,
      `offset file ${path} is not valid JSON (${String(error)}); fix or delete it`,
      {
        retryable: false,
      },
    );
  }
  return checkPollState(parsed, `offset file ${path}`);
}

function checkPollState(value: unknown, where: string): PollState {
  if (value === null || typeof value !== "object") {
    throw new ChannelError(CHANNEL_ID, `${where}: expected an object {offset, handled}`, {
      retryable: false,
    });
  }
  const { offset, handled, botId } = value as { offset?: unknown; handled?: unknown; botId?: unknown };
  if (botId !== undefined && (typeof botId !== "number" || !Number.isSafeInteger(botId))) {
    throw new ChannelError(
      CHANNEL_ID,
      `${where}: "botId" must be an integer (got ${JSON.stringify(botId)})`,
      {
        retryable: false,
      },
    );
  }
  if (offset !== undefined && (typeof offset !== "number" || !Number.isSafeInteger(offset))) {
    throw new ChannelError(
      CHANNEL_ID,
      `${where}: "offset" must be an integer (got ${JSON.stringify(offset)})`,
      {
        retryable: false,
      },
    );
  }
  const ids = handled ?? [];
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === "number" && Number.isSafeInteger(id))) {
    throw new ChannelError(CHANNEL_ID, `${where}: "handled" must be a list of update ids`, {
      retryable: false,
    });
  }
  return {
    ...(offset === undefined ? {} : { offset }),
    handled: ids,
    ...(botId === undefined ? {} : { botId }),
  };
}

/** State at rest is the owner's alone: the file 0600, a folder the store creates for it 0700. */
const PRIVATE_FILE_MODE = 0o600;
const PRIVATE_DIR_MODE = 0o700;

/** An older release wrote the file 0644: removes group and other access (best effort; another user's stays). */
async function tighten(path: string): Promise<void> {
  try {
    const { mode } = await stat(path);
    if ((mode & 0o077) !== 0) await chmod(path, mode & 0o7777 & ~0o077);
  } catch {
    // Missing, another user's, or a read-only file system: not ours to tighten.
  }
}

/**
 * A JSON file `{ "offset": 1234, "handled": [1234], "botId": 123456 }`. Every write goes to a temporary file in the same
 * directory, then replaces the file by rename (atomic on POSIX filesystems). A file that is not valid state
 * makes `load` throw a clear error and is never overwritten by guesswork. The file is written owner-only (0600;
 * an existing looser one is tightened when first read), and a missing folder for it is created 0700; an
 * existing folder is the caller's and keeps its mode.
 */
export function fileOffsetStore(path: string): OffsetStore {
  let state: PollState | undefined;
  let writes: Promise<void> = Promise.resolve();
  let counter = 0;

  async function current(): Promise<PollState> {
    if (state !== undefined) return state;
    let text: string | undefined;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
        throw new ChannelError(CHANNEL_ID, `cannot read offset file ${path}: ${String(error)}`, {
          retryable: false,
        });
      }
    }
    if (text !== undefined) await tighten(path);
    state = text === undefined ? { handled: [] } : parsePollState(text, path);
    return state;
  }

  function write(next: PollState): Promise<void> {
    const run = async (): Promise<void> => {
      counter += 1;
      const temporary = `${path}.${process.pid}.${counter}.tmp`;
      try {
        await mkdir(dirname(path), { recursive: true, mode: PRIVATE_DIR_MODE });
        await writeFile(temporary, `${JSON.stringify(next)}\n`, {
          encoding: "utf8",
          flush: true,
          mode: PRIVATE_FILE_MODE,
        });
        await rename(temporary, path);
      } catch (error) {
        await rm(temporary, { force: true });
        throw new ChannelError(CHANNEL_ID, `cannot write offset file ${path}: ${String(error)}`, {
          retryable: false,
          cause: error,
        });
      }
      state = next;
    };
    const done = writes.then(run, run);
    writes = done.catch(() => undefined);
    return done;
  }

  return {
    load: async () => (await current()).offset,
    save: async (offset) => write(withOffset(await current(), offset)),
    loadHandled: async () => (await current()).handled,
    markHandled: async (updateId) => write(withHandled(await current(), updateId)),
    claimForBot: async (botId) => {
      const before = await current();
      const result = claimed(before, botId);
      if (result.state !== before) await write(result.state);
      return result.kept;
    },
  };
}

/**
 * The part of `@agent-kernel/session-store`'s `ChannelStateApi` this store uses (`store.channelState`); any
 * object with these two methods works.
 */
export interface ChannelStateLike {
  get(channel: string, accountId: string, key: string): Promise<{ readonly value: unknown } | undefined>;
  put(channel: string, accountId: string, key: string, value: unknown): Promise<unknown>;
}

/** Keeps the polling state in the session store's channel-state table under (`telegram`, account, key). */
export function channelStateOffsetStore(
  channelState: ChannelStateLike,
  options: { readonly accountId: string; readonly key?: string },
): OffsetStore {
  const key = options.key ?? "poll-offset";
  const where = `channel state telegram/${options.accountId}/${key}`;
  const read = async (): Promise<PollState> => {
    const entry = await channelState.get(CHANNEL_ID, options.accountId, key);
    return entry === undefined ? { handled: [] } : checkPollState(entry.value, where);
  };
  const write = async (next: PollState): Promise<void> => {
    await channelState.put(CHANNEL_ID, options.accountId, key, next);
  };
  return {
    load: async () => (await read()).offset,
    save: async (offset) => write(withOffset(await read(), offset)),
    loadHandled: async () => (await read()).handled,
    markHandled: async (updateId) => write(withHandled(await read(), updateId)),
    claimForBot: async (botId) => {
      const before = await read();
      const result = claimed(before, botId);
      if (result.state !== before) await write(result.state);
      return result.kept;
    },
  };
}

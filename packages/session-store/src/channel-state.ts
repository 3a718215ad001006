// Chat-channel state: a small generic key-value space per (channel, account) — pairing codes and approved
// senders, inbound dedupe marks, poll offsets. Owns: the `ChannelStateApi` contract (JSON values, versions
// for compare-and-set, optional expiry, prefix listing, purging), its input checks and the Kysely
// implementation (the PostgreSQL path). Does not own: what channels keep in it (channels-core and the
// adapters) or the SQLite fast path (sqlite/channel-state.ts).
//
// Expiry: an entry whose `expiresAt` is at or before `now` is absent for every call — `get` and `list` skip
// it, `put` with `expectedVersion: 0` replaces it — until `purgeExpired` deletes it. A replaced row keeps
// counting versions from the expired one, so a version read before the expiry never matches the new entry.
import type { Kysely, Selectable } from "kysely";
import { SessionConflictError, SessionStoreError } from "./errors.ts";
import type { ChannelStateTable, ControlPlaneDatabase } from "./schema.ts";

export interface ChannelStateEntry {
  readonly channel: string;
  readonly accountId: string;
  readonly key: string;
  /** The stored JSON value (parsed). */
  readonly value: unknown;
  /** 1 on creation, +1 on every write. */
  readonly version: number;
  /** Milliseconds since the epoch after which the entry is absent; unset = never expires. */
  readonly expiresAt?: number;
  readonly updatedAt: number;
}

export interface ChannelStatePutOptions {
  /**
   * Compare-and-set: write only when the live entry is at this version; `0` = only when there is no live
   * entry. A mismatch throws `SessionConflictError` and writes nothing. Unset = write unconditionally.
   */
  readonly expectedVersion?: number;
  /** When the entry expires (ms since the epoch); unset = never. */
  readonly expiresAt?: number;
  readonly now?: number;
}

export interface ChannelStateApi {
  /** The live entry, or undefined (missing or expired). */
  get(
    channel: string,
    accountId: string,
    key: string,
    options?: { readonly now?: number },
  ): Promise<ChannelStateEntry | undefined>;
  /** Creates or replaces the entry; see `ChannelStatePutOptions.expectedVersion` for compare-and-set. */
  put(
    channel: string,
    accountId: string,
    key: string,
    value: unknown,
    options?: ChannelStatePutOptions,
  ): Promise<ChannelStateEntry>;
  /** True when a row was deleted. With `expectedVersion`, deletes only that version (else false). */
  delete(
    channel: string,
    accountId: string,
    key: string,
    options?: { readonly expectedVersion?: number },
  ): Promise<boolean>;
  /** The live entries of one channel account whose key starts with `prefix` (default: all), ordered by key. */
  list(
    channel: string,
    accountId: string,
    options?: { readonly prefix?: string; readonly now?: number },
  ): Promise<ChannelStateEntry[]>;
  /** Deletes every expired row (all channels); returns how many. */
  purgeExpired(options?: { readonly now?: number }): Promise<number>;
}

// ---------------------------------------------------------------------------
// Shared rules: input checks, row mapping, errors.

export interface ChannelStateWrite {
  readonly channel: string;
  readonly account_id: string;
  readonly key: string;
  readonly value: string;
  readonly expires_at: number | null;
  readonly updated_at: number;
}

function checkName(field: string, value: unknown): string {
  if (typeof value !== "string" || value === "") {
    throw new SessionStoreError(`channel state: ${field} must be a non-empty string, got ${describe(value)}`);
  }
  return value;
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  return value === null ? "null" : typeof value;
}

export function checkChannelAccount(channel: unknown, accountId: unknown): void {
  checkName("channel", channel);
  checkName("accountId", accountId);
}

export function checkChannelStateRef(channel: unknown, accountId: unknown, key: unknown): void {
  checkChannelAccount(channel, accountId);
  checkName("key", key);
}

/** Validates a put and turns it into the row to write (without version). */
export function channelStateWrite(
  channel: string,
  accountId: string,
  key: string,
  value: unknown,
  options: ChannelStatePutOptions,
  now: number,
): ChannelStateWrite {
  checkChannelStateRef(channel, accountId, key);
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw new SessionStoreError(
      `channel state ${channel}/${accountId}/${key}: value is not JSON-serialisable (${String(error)})`,
    );
  }
  if (json === undefined) {
    throw new SessionStoreError(
      `channel state ${channel}/${accountId}/${key}: value must be JSON-serialisable, got ${typeof value}`,
    );
  }
  const { expectedVersion, expiresAt } = options;
  if (expectedVersion !== undefined && !(Number.isSafeInteger(expectedVersion) && expectedVersion >= 0)) {
    throw new SessionStoreError(
      `channel state ${channel}/${accountId}/${key}: expectedVersion must be a non-negative integer, got ${String(expectedVersion)}`,
    );
  }
  if (expiresAt !== undefined && !Number.isFinite(expiresAt)) {
    throw new SessionStoreError(
      `channel state ${channel}/${accountId}/${key}: expiresAt must be a finite number of ms, got ${String(expiresAt)}`,
    );
  }
  return {
    channel,
    account_id: accountId,
    key,
    value: json,
    expires_at: expiresAt === undefined ? null : Math.trunc(expiresAt),
    updated_at: now,
  };
}

export function isLive(row: { readonly expires_at: number | null }, now: number): boolean {
  return row.expires_at === null || Number(row.expires_at) > now;
}

export function toChannelStateEntry(row: Selectable<ChannelStateTable>): ChannelStateEntry {
  return {
    channel: row.channel,
    accountId: row.account_id,
    key: row.key,
    value: JSON.parse(row.value) as unknown,
    version: Number(row.version),
    ...(row.expires_at === null ? {} : { expiresAt: Number(row.expires_at) }),
    updatedAt: Number(row.updated_at),
  };
}

export function entryFromWrite(write: ChannelStateWrite, version: number): ChannelStateEntry {
  return toChannelStateEntry({ ...write, version });
}

export function channelStateConflict(
  channel: string,
  accountId: string,
  key: string,
  expectedVersion: number,
): SessionConflictError {
  return new SessionConflictError(
    expectedVersion === 0
      ? `channel state ${channel}/${accountId}/${key} already exists (expected no entry)`
      : `channel state ${channel}/${accountId}/${key} is no longer at version ${expectedVersion}`,
  );
}

/** Ordering by UTF-16 code units in JavaScript, so every backend lists in the same order whatever its collation. */
export function byKey(a: ChannelStateEntry, b: ChannelStateEntry): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** SQL's substr and length count characters (code points), not UTF-16 units. */
export function codePoints(text: string): number {
  let count = 0;
  for (const _char of text) count++;
  return count;
}

export function checkPrefix(prefix: unknown): string {
  if (prefix === undefined) return "";
  if (typeof prefix !== "string") throw new SessionStoreError(`channel state: prefix must be a string`);
  return prefix;
}

// ---------------------------------------------------------------------------
// The Kysely implementation.

export class KyselyChannelState implements ChannelStateApi {
  readonly #db: Kysely<ControlPlaneDatabase>;

  constructor(db: Kysely<ControlPlaneDatabase>) {
    this.#db = db;
  }

  async get(
    channel: string,
    accountId: string,
    key: string,
    options: { readonly now?: number } = {},
  ): Promise<ChannelStateEntry | undefined> {
    checkChannelStateRef(channel, accountId, key);
    const row = await this.#db
      .selectFrom("channel_state")
      .selectAll()
      .where("channel", "=", channel)
      .where("account_id", "=", accountId)
      .where("key", "=", key)
      .executeTakeFirst();
    return row !== undefined && isLive(row, options.now ?? Date.now()) ? toChannelStateEntry(row) : undefined;
  }

  async put(
    channel: string,
    accountId: string,
    key: string,
    value: unknown,
    options: ChannelStatePutOptions = {},
  ): Promise<ChannelStateEntry> {
    const now = options.now ?? Date.now();
    const write = channelStateWrite(channel, accountId, key, value, options, now);
    const expected = options.expectedVersion;
    const replace = { value: write.value, expires_at: write.expires_at, updated_at: write.updated_at };
    if (expected === undefined || expected === 0) {
      const row = await this.#db
        .insertInto("channel_state")
        .values({ ...write, version: 1 })
        .onConflict((conflict) => {
          const update = conflict.columns(["channel", "account_id", "key"]).doUpdateSet((eb) => ({
            ...replace,
            version: eb("channel_state.version", "+", 1),
          }));
          // Create-only: replace a row only when it has expired.
          return expected === 0
            ? update.where((eb) =>
                eb.and([
                  eb("channel_state.expires_at", "is not", null),
                  eb("channel_state.expires_at", "<=", now),
                ]),
              )
            : update;
        })
        .returning("version")
        .executeTakeFirst();
      if (row === undefined) throw channelStateConflict(channel, accountId, key, 0);
      return entryFromWrite(write, Number(row.version));
    }
    const result = await this.#db
      .updateTable("channel_state")
      .set({ ...replace, version: expected + 1 })
      .where("channel", "=", channel)
      .where("account_id", "=", accountId)
      .where("key", "=", key)
      .where("version", "=", expected)
      .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", now)]))
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) throw channelStateConflict(channel, accountId, key, expected);
    return entryFromWrite(write, expected + 1);
  }

  async delete(
    channel: string,
    accountId: string,
    key: string,
    options: { readonly expectedVersion?: number } = {},
  ): Promise<boolean> {
    checkChannelStateRef(channel, accountId, key);
    let query = this.#db
      .deleteFrom("channel_state")
      .where("channel", "=", channel)
      .where("account_id", "=", accountId)
      .where("key", "=", key);
    if (options.expectedVersion !== undefined) query = query.where("version", "=", options.expectedVersion);
    const result = await query.executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async list(
    channel: string,
    accountId: string,
    options: { readonly prefix?: string; readonly now?: number } = {},
  ): Promise<ChannelStateEntry[]> {
    checkChannelAccount(channel, accountId);
    const prefix = checkPrefix(options.prefix);
    const now = options.now ?? Date.now();
    let query = this.#db
      .selectFrom("channel_state")
      .selectAll()
      .where("channel", "=", channel)
      .where("account_id", "=", accountId)
      .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", now)]));
    // substr, not LIKE: SQLite's LIKE ignores ASCII case and both treat `%`/`_` as wildcards.
    if (prefix !== "") {
      query = query.where(
        (eb) => eb.fn<string>("substr", [eb.ref("key"), eb.val(1), eb.val(codePoints(prefix))]),
        "=",
        prefix,
      );
    }
    return (await query.execute()).map(toChannelStateEntry).sort(byKey);
  }

  async purgeExpired(options: { readonly now?: number } = {}): Promise<number> {
    const result = await this.#db
      .deleteFrom("channel_state")
      .where("expires_at", "is not", null)
      .where("expires_at", "<=", options.now ?? Date.now())
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

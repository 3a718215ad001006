// The SQLite implementation of the channel-state API: every call as a better-sqlite3 statement prepared once
// per store, with the same rules and errors as `KyselyChannelState` (channel-state.ts, the PostgreSQL path).
// Owns: those statements. Does not own: what channels keep in it (channels-core and the adapters).
import type Database from "better-sqlite3";
import type { Selectable } from "kysely";
import {
  byKey,
  type ChannelStateApi,
  type ChannelStateEntry,
  type ChannelStatePutOptions,
  type ChannelStateWrite,
  channelStateConflict,
  channelStateWrite,
  checkChannelAccount,
  checkChannelStateRef,
  checkPrefix,
  codePoints,
  entryFromWrite,
  isLive,
  toChannelStateEntry,
} from "../channel-state.ts";
import type { ChannelStateTable } from "../schema.ts";

type ChannelStateRow = Selectable<ChannelStateTable>;
type Ref = { channel: string; account_id: string; key: string };
type Put = ChannelStateWrite & { now: number };

const WHERE_REF = "channel = @channel AND account_id = @account_id AND key = @key";
const LIVE = "(expires_at IS NULL OR expires_at > @now)";
const INSERT =
  "INSERT INTO channel_state (channel, account_id, key, value, version, expires_at, updated_at) " +
  "VALUES (@channel, @account_id, @key, @value, 1, @expires_at, @updated_at) " +
  "ON CONFLICT (channel, account_id, key) DO UPDATE SET value = excluded.value, " +
  "version = channel_state.version + 1, expires_at = excluded.expires_at, updated_at = excluded.updated_at";

export class SqliteChannelState implements ChannelStateApi {
  readonly #one: Database.Statement<[Ref], ChannelStateRow>;
  readonly #upsert: Database.Statement<[Put], { version: number }>;
  /** Create-only: replaces an existing row only when it has expired. */
  readonly #create: Database.Statement<[Put], { version: number }>;
  readonly #updateIfVersion: Database.Statement<[Put & { expected: number }]>;
  readonly #delete: Database.Statement<[Ref]>;
  readonly #deleteIfVersion: Database.Statement<[Ref & { expected: number }]>;
  readonly #all: Database.Statement<[{ channel: string; account_id: string; now: number }], ChannelStateRow>;
  readonly #byPrefix: Database.Statement<
    [{ channel: string; account_id: string; now: number; prefix: string; length: number }],
    ChannelStateRow
  >;
  readonly #purge: Database.Statement<[number]>;

  constructor(raw: Database.Database) {
    this.#one = raw.prepare(`SELECT * FROM channel_state WHERE ${WHERE_REF}`);
    this.#upsert = raw.prepare(`${INSERT} RETURNING version`);
    this.#create = raw.prepare(
      `${INSERT} WHERE channel_state.expires_at IS NOT NULL AND channel_state.expires_at <= @now RETURNING version`,
    );
    this.#updateIfVersion = raw.prepare(
      "UPDATE channel_state SET value = @value, version = @expected + 1, expires_at = @expires_at, " +
        `updated_at = @updated_at WHERE ${WHERE_REF} AND version = @expected AND ${LIVE}`,
    );
    this.#delete = raw.prepare(`DELETE FROM channel_state WHERE ${WHERE_REF}`);
    this.#deleteIfVersion = raw.prepare(
      `DELETE FROM channel_state WHERE ${WHERE_REF} AND version = @expected`,
    );
    this.#all = raw.prepare(
      `SELECT * FROM channel_state WHERE channel = @channel AND account_id = @account_id AND ${LIVE}`,
    );
    this.#byPrefix = raw.prepare(
      "SELECT * FROM channel_state WHERE channel = @channel AND account_id = @account_id " +
        `AND substr(key, 1, @length) = @prefix AND ${LIVE}`,
    );
    this.#purge = raw.prepare("DELETE FROM channel_state WHERE expires_at IS NOT NULL AND expires_at <= ?");
  }

  async get(
    channel: string,
    accountId: string,
    key: string,
    options: { readonly now?: number } = {},
  ): Promise<ChannelStateEntry | undefined> {
    checkChannelStateRef(channel, accountId, key);
    const row = this.#one.get({ channel, account_id: accountId, key });
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
    const params: Put = { ...write, now };
    if (expected === undefined || expected === 0) {
      const row = (expected === 0 ? this.#create : this.#upsert).get(params);
      if (row === undefined) throw channelStateConflict(channel, accountId, key, 0);
      return entryFromWrite(write, row.version);
    }
    if (this.#updateIfVersion.run({ ...params, expected }).changes !== 1) {
      throw channelStateConflict(channel, accountId, key, expected);
    }
    return entryFromWrite(write, expected + 1);
  }

  async delete(
    channel: string,
    accountId: string,
    key: string,
    options: { readonly expectedVersion?: number } = {},
  ): Promise<boolean> {
    checkChannelStateRef(channel, accountId, key);
    const ref = { channel, account_id: accountId, key };
    const expected = options.expectedVersion;
    const result =
      expected === undefined ? this.#delete.run(ref) : this.#deleteIfVersion.run({ ...ref, expected });
    return result.changes > 0;
  }

  async list(
    channel: string,
    accountId: string,
    options: { readonly prefix?: string; readonly now?: number } = {},
  ): Promise<ChannelStateEntry[]> {
    checkChannelAccount(channel, accountId);
    const prefix = checkPrefix(options.prefix);
    const scope = { channel, account_id: accountId, now: options.now ?? Date.now() };
    const rows =
      prefix === ""
        ? this.#all.all(scope)
        : this.#byPrefix.all({ ...scope, prefix, length: codePoints(prefix) });
    return rows.map(toChannelStateEntry).sort(byKey);
  }

  async purgeExpired(options: { readonly now?: number } = {}): Promise<number> {
    return this.#purge.run(options.now ?? Date.now()).changes;
  }
}

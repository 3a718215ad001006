// Opening the store for a command: the one the config names (SQLite under the state dir, or PostgreSQL with
// `store.driver: "postgres"`), with the store's own failures (not a store, from a newer release, not writable,
// not reachable) turned into exit code 5 with the store's message, and what a command's store calls throw
// when a file fails them (full, read-only, damaged, unreadable: session-store's `StorageFailure`) too. Owns
// nothing else; imports no pi.
import {
  type AnyKernelStore,
  controlPlanePath,
  openKernelStore,
  type StorageFailure,
  toStorageFailure,
} from "@agent-kernel/kernel/admin";
import type { CommandContext } from "../context.ts";
import { CliError, EXIT } from "../exit-codes.ts";

const STORE_ERRORS = new Set(["StoreOpenError", "StoreVersionError", "SessionStoreError"]);

/** Where the command's store is, for messages: the state dir, or the PostgreSQL store. */
export function storeLocation(context: CommandContext): string {
  return context.config.store?.driver === "postgres"
    ? "the PostgreSQL store (store.postgres.url)"
    : context.stateDir;
}

/**
 * The storage failure in `error`, naming its file: a bare SQLite error of the SQLite store is about its
 * control plane (every agent-database call names its own file).
 */
export function storageFailureIn(error: unknown, context: CommandContext): StorageFailure | undefined {
  const sqlite = context.config.store?.driver !== "postgres";
  return toStorageFailure(error, sqlite ? controlPlanePath(context.stateDir) : undefined);
}

export function storeError(error: unknown, context: CommandContext): unknown {
  const storage = storageFailureIn(error, context);
  if (storage !== undefined) {
    return new CliError(EXIT.store, `cannot open the store in ${storeLocation(context)}: ${storage.message}`);
  }
  if (error instanceof Error && (STORE_ERRORS.has(error.name) || "code" in error)) {
    return new CliError(EXIT.store, `cannot open the store in ${storeLocation(context)}: ${error.message}`);
  }
  return error;
}

export async function openStoreFor(context: CommandContext): Promise<AnyKernelStore> {
  try {
    return await openKernelStore({ stateDir: context.stateDir, config: context.config });
  } catch (error) {
    throw storeError(error, context);
  }
}

/** Runs `use` with the store open, closing it after. */
export async function withStore<T>(
  context: CommandContext,
  use: (store: AnyKernelStore) => Promise<T>,
): Promise<T> {
  const store = await openStoreFor(context);
  try {
    return await use(store);
  } catch (error) {
    const storage = storageFailureIn(error, context);
    throw storage === undefined ? error : new CliError(EXIT.store, storage.message);
  } finally {
    await store.close();
  }
}

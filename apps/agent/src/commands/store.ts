// Opening the store for a command: the one the config names (SQLite under the state dir, or PostgreSQL with
// `store.driver: "postgres"`), with the store's own failures (not a store, from a newer release, not writable,
// not reachable) turned into exit code 5 with the store's message. Owns nothing else; imports no pi.
import { type AnyKernelStore, openKernelStore } from "@agent-kernel/kernel/admin";
import type { CommandContext } from "../context.ts";
import { CliError, EXIT } from "../exit-codes.ts";

const STORE_ERRORS = new Set(["StoreOpenError", "StoreVersionError", "SessionStoreError"]);

/** Where the command's store is, for messages: the state dir, or the PostgreSQL store. */
export function storeLocation(context: CommandContext): string {
  return context.config.store?.driver === "postgres"
    ? "the PostgreSQL store (store.postgres.url)"
    : context.stateDir;
}

export function storeError(error: unknown, context: CommandContext): unknown {
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
  } finally {
    await store.close();
  }
}

// Opening the store for a command, with the store's own failures (not a store, from a newer release, not
// writable) turned into exit code 5 with the store's message. Owns nothing else; imports no pi.
import { type KernelStore, openKernelStore } from "@agent-kernel/kernel/admin";
import { CliError, EXIT } from "../exit-codes.ts";

const STORE_ERRORS = new Set(["StoreOpenError", "StoreVersionError", "SessionStoreError"]);

export function storeError(error: unknown, stateDir: string): unknown {
  if (error instanceof Error && (STORE_ERRORS.has(error.name) || "code" in error)) {
    return new CliError(EXIT.store, `cannot open the store in ${stateDir}: ${error.message}`);
  }
  return error;
}

export async function openStoreFor(stateDir: string): Promise<KernelStore> {
  try {
    return await openKernelStore({ stateDir });
  } catch (error) {
    throw storeError(error, stateDir);
  }
}

/** Runs `use` with the store open, closing it after. */
export async function withStore<T>(stateDir: string, use: (store: KernelStore) => Promise<T>): Promise<T> {
  const store = await openStoreFor(stateDir);
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

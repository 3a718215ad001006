// A child process for src/bad-input.test.ts: opens the store in a folder read-only to it (immutable, or as another user) and
// prints the error's name and message as JSON, or {"ok":true}.
//   node --conditions=@agent-kernel/source test/child/open-store.ts <stateDir>
import { openSessionStore } from "../../src/store.ts";

const [stateDir = ""] = process.argv.slice(2);
try {
  const store = await openSessionStore({ stateDir });
  await store.close();
  process.stdout.write(JSON.stringify({ ok: true }));
} catch (error) {
  const { name, message } = error instanceof Error ? error : { name: "unknown", message: String(error) };
  process.stdout.write(JSON.stringify({ ok: false, name, message }));
}

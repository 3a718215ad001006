// `agent runs show <runId> --prompt`: exactly what a run's model was told — its system prompt read back from
// the session's transcript, with the sha256 the run's attempts recorded for it (a mismatch is said on stderr).
// Owns the printing; reading the prompt back is the kernel's (`showRunPrompt`).
import { showRunPrompt } from "@agent-kernel/kernel/admin";
import type { CommandContext } from "../context.ts";
import { CliError, EXIT, type ExitCode } from "../exit-codes.ts";
import { type CliIo, line } from "../io.ts";
import { storeLocation, withStore } from "./store.ts";

export function runPrompt(
  context: CommandContext,
  runId: string,
  flags: { readonly json?: boolean | undefined },
  io: CliIo,
): Promise<ExitCode> {
  return withStore(context, async (store) => {
    const shown = await showRunPrompt(store, runId);
    if (shown === undefined) {
      throw new CliError(
        EXIT.notFound,
        `no run "${runId}" with a recorded system prompt in ${storeLocation(context)}.`,
      );
    }
    if (flags.json) {
      line(io.stdout, JSON.stringify(shown, null, 2));
      return EXIT.ok;
    }
    if (shown.matches === false) {
      line(
        io.stderr,
        `agent: the transcript's prompt (sha256 ${shown.hash}) is not the one the run recorded (${shown.recordedHashes.at(-1)}): the session changed since.`,
      );
    }
    line(io.stdout, shown.prompt);
    return EXIT.ok;
  });
}

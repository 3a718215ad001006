// Test helpers shared by read-tool.test.ts and read-tool-parity.test.ts: what a read tool gave the model (its
// text or its error's message), from pi's own read tool and from ours over the same directory. Owns no test.
import { createReadToolDefinition } from "@earendil-works/pi-coding-agent";
import { hostPathView } from "./path-view.ts";
import { createBoundedReadTool } from "./read-tool.ts";

/** The parameters both read tools take. */
export type ReadParams = { path: string; offset?: number; limit?: number };

/** What a read tool gave the model: its text, or the message of the error it threw. */
export type Outcome = { readonly text: string } | { readonly error: string };

async function outcome(
  run: () => Promise<{ content: readonly { type: string; text?: string }[] }>,
): Promise<Outcome> {
  try {
    const result = await run();
    return {
      text: result.content.map((block) => (block.type === "text" ? (block.text ?? "") : "")).join(""),
    };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

/** pi's own read tool on a file of `dir`. */
export const piOutcome = (dir: string, params: ReadParams): Promise<Outcome> =>
  outcome(() =>
    createReadToolDefinition(dir).execute("pi", params, undefined, undefined, undefined as never),
  );

/** Our read tool over the same directory. */
export const ourOutcome = (dir: string, params: ReadParams): Promise<Outcome> =>
  outcome(() =>
    createBoundedReadTool(hostPathView(dir)).execute(
      "ours",
      params,
      undefined,
      undefined,
      undefined as never,
    ),
  );

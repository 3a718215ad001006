// Types for pino-roll 4 (it ships none): the stream builder the gateway's log files use.
declare module "pino-roll" {
  import type { DestinationStream } from "pino";

  interface PinoRollOptions {
    readonly file: string | (() => string);
    readonly size?: number | string;
    readonly frequency?: number | string;
    readonly mkdir?: boolean;
    readonly extension?: string;
    readonly limit?: { readonly count?: number; readonly removeOtherLogFiles?: boolean };
    readonly symlink?: boolean;
  }

  export default function build(
    options: PinoRollOptions,
  ): Promise<DestinationStream & NodeJS.EventEmitter & { end(): void }>;
}

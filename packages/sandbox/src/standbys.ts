// Sandboxes started ahead of their command (standbys). Owns: at most one waiting sandbox per recent set of
// settings (the key: cwd, environment, mounts, network, the limits set at start), handing it out once, starting the next one,
// stopping one left idle (a minute) or crowded out (more than eight sets), and stopping all at exit. A standby
// is an ordinary sandbox of those settings whose shell waits to read its command: it runs exactly one command,
// with the same isolation as one started for it. Does not own: starting a sandbox (the engine passes `start`).
import type { StartedProcess } from "./process-runner.ts";
import type { SandboxSettings } from "./types.ts";

/** A standby not used for this long is stopped. */
const STANDBY_IDLE_MS = 60_000;
/** Settings with a standby at once (the least recently prepared goes first). */
const MAX_STANDBYS = 8;

const allStandbys = new Set<{ stopAll(): void }>();

/** What a started sandbox is made of; the wall time and output limit apply when it runs, so they are not in it. */
export function standbyKey(settings: SandboxSettings): string {
  const { timeoutMs: _timeout, maxOutputBytes: _output, ...made } = settings.limits;
  return JSON.stringify([settings.cwd, settings.env, settings.mounts, settings.network, made]);
}

/**
 * One started sandbox per recent set of settings. Taking one leaves none for its key until `prepare` starts
 * the next; a standby that died while waiting (killed from outside) is dropped, never used.
 */
export class Standbys {
  readonly #waiting = new Map<string, { process: StartedProcess; timer: NodeJS.Timeout }>();

  constructor() {
    // bwrap's --die-with-parent stops them when this process dies; a clean exit stops them at once.
    if (allStandbys.size === 0) {
      process.once("exit", () => {
        for (const standbys of allStandbys) standbys.stopAll();
      });
    }
    allStandbys.add(this);
  }

  stopAll(): void {
    for (const { process: standby, timer } of this.#waiting.values()) {
      clearTimeout(timer);
      standby.kill();
    }
    this.#waiting.clear();
  }

  take(key: string): StartedProcess | undefined {
    const entry = this.#waiting.get(key);
    if (entry === undefined) return undefined;
    this.#waiting.delete(key);
    clearTimeout(entry.timer);
    if (entry.process.exited) {
      entry.process.kill();
      return undefined;
    }
    return entry.process;
  }

  prepare(key: string, start: () => StartedProcess): void {
    if (this.#waiting.has(key)) return;
    setImmediate(() => {
      if (this.#waiting.has(key)) return;
      let started: StartedProcess;
      try {
        started = start();
      } catch {
        return; // the next command starts its own sandbox and reports what fails
      }
      started.unrefWhileWaiting();
      const timer = setTimeout(() => {
        if (this.#waiting.get(key)?.process === started) this.#waiting.delete(key);
        started.kill();
      }, STANDBY_IDLE_MS);
      timer.unref();
      this.#waiting.set(key, { process: started, timer });
      if (this.#waiting.size > MAX_STANDBYS) {
        const [oldestKey, oldest] = this.#waiting.entries().next().value ?? [];
        if (oldestKey !== undefined && oldest !== undefined) {
          this.#waiting.delete(oldestKey);
          clearTimeout(oldest.timer);
          oldest.process.kill();
        }
      }
    });
  }
}

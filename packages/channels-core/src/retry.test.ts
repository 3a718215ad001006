// Retry on channel rate limits with an injected sleep: retry-after honoured, jittered backoff, no retry for
// permanent errors, attempt caps, abort.
import { describe, expect, it } from "vitest";
import { ChannelError } from "./contract.ts";
import { withChannelRetry } from "./retry.ts";

function recorder() {
  const waits: number[] = [];
  const sleep = async (ms: number) => {
    waits.push(ms);
  };
  return { waits, sleep };
}

const rateLimited = (retryAfterMs: number) =>
  new ChannelError("telegram", "Too Many Requests: retry after 3", {
    status: 429,
    retryAfterMs,
    retryable: true,
  });

describe("withChannelRetry", () => {
  it("waits the channel's retry-after, then succeeds", async () => {
    const { waits, sleep } = recorder();
    let calls = 0;
    const result = await withChannelRetry(
      async (attempt) => {
        calls++;
        if (attempt < 3) throw rateLimited(3000);
        return "sent";
      },
      { sleep },
    );
    expect(result).toBe("sent");
    expect(calls).toBe(3);
    expect(waits).toEqual([3000, 3000]);
  });

  it("caps a retry-after at maxDelayMs", async () => {
    const { waits, sleep } = recorder();
    await withChannelRetry(
      async (attempt) => {
        if (attempt === 1) throw rateLimited(600_000);
        return 1;
      },
      { sleep, maxDelayMs: 10_000 },
    );
    expect(waits).toEqual([10_000]);
  });

  it("backs off exponentially with jitter for retryable errors without retry-after", async () => {
    const { waits, sleep } = recorder();
    const error = new ChannelError("slack", "internal_error", { status: 503, retryable: true });
    await expect(
      withChannelRetry(
        async () => {
          throw error;
        },
        { sleep, maxAttempts: 5, baseDelayMs: 100, random: () => 1 },
      ),
    ).rejects.toBe(error);
    expect(waits).toEqual([100, 200, 400, 800]);
    const low = recorder();
    await expect(
      withChannelRetry(
        async () => {
          throw error;
        },
        { sleep: low.sleep, maxAttempts: 3, baseDelayMs: 100, random: () => 0 },
      ),
    ).rejects.toBe(error);
    expect(low.waits).toEqual([50, 100]);
  });

  it("does not retry permanent channel errors or foreign errors", async () => {
    const { waits, sleep } = recorder();
    const forbidden = new ChannelError("telegram", "Forbidden: bot was blocked", {
      status: 403,
      retryable: false,
    });
    let calls = 0;
    await expect(
      withChannelRetry(
        async () => {
          calls++;
          throw forbidden;
        },
        { sleep },
      ),
    ).rejects.toBe(forbidden);
    await expect(
      withChannelRetry(
        async () => {
          calls++;
          throw new TypeError("bug");
        },
        { sleep },
      ),
    ).rejects.toThrow("bug");
    expect(calls).toBe(2);
    expect(waits).toEqual([]);
  });

  it("stops when aborted during a wait, with the signal's reason", async () => {
    const controller = new AbortController();
    let calls = 0;
    const sleep = async () => {
      controller.abort(new Error("shutting down"));
    };
    await expect(
      withChannelRetry(
        async () => {
          calls++;
          throw rateLimited(1000);
        },
        { sleep, signal: controller.signal },
      ),
    ).rejects.toThrow("shutting down");
    expect(calls).toBe(1);
  });

  it("with the real timer, an abort ends the wait at once", async () => {
    const controller = new AbortController();
    const pending = withChannelRetry(
      async () => {
        throw rateLimited(60_000);
      },
      { signal: controller.signal },
    );
    controller.abort(new Error("stop"));
    await expect(pending).rejects.toThrow("stop");
  });
});

import { describe, expect, it } from "vitest";
import { retryWhileBusy } from "./connection.ts";

const busy = (code = "SQLITE_BUSY") => Object.assign(new Error("database is locked"), { code });

describe("retryWhileBusy (opening a file another process is switching to WAL)", () => {
  it("retries a step that fails with SQLITE_BUSY until it succeeds", () => {
    let calls = 0;
    retryWhileBusy(5_000, () => {
      calls += 1;
      if (calls < 3) throw busy(calls === 1 ? "SQLITE_BUSY" : "SQLITE_BUSY_RECOVERY");
    });
    expect(calls).toBe(3);
  });

  it("throws any other error at once, and SQLITE_BUSY once the timeout has run out", () => {
    let calls = 0;
    expect(() =>
      retryWhileBusy(5_000, () => {
        calls += 1;
        throw Object.assign(new Error("file is not a database"), { code: "SQLITE_NOTADB" });
      }),
    ).toThrow("file is not a database");
    expect(calls).toBe(1);
    calls = 0;
    expect(() =>
      retryWhileBusy(60, () => {
        calls += 1;
        throw busy();
      }),
    ).toThrow("database is locked");
    expect(calls).toBeGreaterThan(1);
  });
});

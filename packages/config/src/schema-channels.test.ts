// `dmPolicy: "open"` needs `"*"` in the effective allowFrom (OpenClaw's requireOpenAllowFrom), for channels,
// accounts and the web chat's own default; the exact lines a user reads.
import { describe, expect, it } from "vitest";
import { parseConfig, safeParseConfig } from "./load.ts";

const parse = (input: unknown) => parseConfig(input, { env: {} });

function problems(input: unknown): string[] {
  const result = safeParseConfig(input, { env: {}, sourceName: "test.json5" });
  if (result.ok) throw new Error("expected the config to be invalid");
  return result.error.message
    .split("\n")
    .slice(1)
    .map((line) => line.replace(/^ {2}- /, ""));
}

describe('dmPolicy "open" requires allowFrom "*"', () => {
  it("rejects open without a list, with an empty list, or with a list lacking *; names the path and the fix", () => {
    expect(problems({ channels: { telegram: { dmPolicy: "open" } } })).toEqual([
      'channels.telegram.allowFrom: dmPolicy "open" requires allowFrom to include "*", found nothing; add allowFrom: ["*"] to let anyone send direct messages, or use dmPolicy "pairing"',
    ]);
    expect(problems({ channels: { slack: { dmPolicy: "open", allowFrom: [] } } })).toEqual([
      'channels.slack.allowFrom: dmPolicy "open" requires allowFrom to include "*", found nothing; add allowFrom: ["*"] to let anyone send direct messages, or use dmPolicy "pairing"',
    ]);
    expect(problems({ channels: { discord: { dmPolicy: "open", allowFrom: ["42", "@ada"] } } })).toEqual([
      'channels.discord.allowFrom: dmPolicy "open" requires allowFrom to include "*", found ["42","@ada"]; add "*" to allowFrom to let anyone send direct messages, or use dmPolicy "allowlist" to admit only the listed senders',
    ]);
  });

  it('accepts open with "*" (also padded, also beside named senders), and other policies without it', () => {
    expect(
      parse({ channels: { telegram: { dmPolicy: "open", allowFrom: ["*"] } } }).channels.telegram,
    ).toMatchObject({ dmPolicy: "open", allowFrom: ["*"] });
    expect(() =>
      parse({ channels: { telegram: { dmPolicy: "open", allowFrom: [" * ", 42] } } }),
    ).not.toThrow();
    expect(() =>
      parse({
        channels: {
          telegram: { dmPolicy: "allowlist", allowFrom: ["1"] },
          slack: { dmPolicy: "pairing" },
          mychat: { dmPolicy: "disabled" },
        },
      }),
    ).not.toThrow();
  });

  it("checks each account with its own policy and list, else the channel's", () => {
    expect(
      problems({
        channels: {
          telegram: {
            dmPolicy: "open",
            allowFrom: ["*"],
            accounts: {
              inherits: { historyLimit: 5 },
              narrows: { allowFrom: ["7"] },
              opens: { dmPolicy: "open", allowFrom: ["8"] },
            },
          },
          slack: { allowFrom: ["9"], accounts: { work: { dmPolicy: "open" } } },
        },
      }),
    ).toEqual([
      'channels.telegram.accounts.narrows.allowFrom: dmPolicy "open" (the channel\'s) requires allowFrom to include "*", found ["7"]; add "*" to allowFrom to let anyone send direct messages, or use dmPolicy "allowlist" to admit only the listed senders',
      'channels.telegram.accounts.opens.allowFrom: dmPolicy "open" requires allowFrom to include "*", found ["8"]; add "*" to allowFrom to let anyone send direct messages, or use dmPolicy "allowlist" to admit only the listed senders',
      'channels.slack.accounts.work.allowFrom: dmPolicy "open" requires allowFrom (the channel\'s, as this account sets none) to include "*", found ["9"]; add "*" to allowFrom to let anyone send direct messages, or use dmPolicy "allowlist" to admit only the listed senders',
    ]);
    // An account that opens DMs with its own "*" is fine, and so is a channel that inherits nothing open.
    expect(() =>
      parse({ channels: { telegram: { accounts: { work: { dmPolicy: "open", allowFrom: ["*"] } } } } }),
    ).not.toThrow();
  });

  it("reports the channel once when its accounts change nothing about DMs", () => {
    expect(problems({ channels: { mychat: { dmPolicy: "open", accounts: { a: {}, b: {} } } } })).toHaveLength(
      1,
    );
  });
});

describe("the web chat's access defaults", () => {
  it('is open to everyone holding its token: dmPolicy "open" with allowFrom ["*"] when neither is written', () => {
    const config = parse({ channels: { webchat: {} } });
    expect(config.channels.webchat).toMatchObject({
      host: "127.0.0.1",
      dmPolicy: "open",
      allowFrom: ["*"],
    });
  });

  it("follows the rule for whatever is written", () => {
    expect(problems({ channels: { webchat: { dmPolicy: "open" } } })).toEqual([
      'channels.webchat.allowFrom: dmPolicy "open" requires allowFrom to include "*", found nothing; add allowFrom: ["*"] to let anyone send direct messages, or use dmPolicy "pairing"',
    ]);
    expect(problems({ channels: { webchat: { allowFrom: ["me"] } } })).toEqual([
      'channels.webchat.allowFrom: dmPolicy "open" (the default here) requires allowFrom to include "*", found ["me"]; add "*" to allowFrom to let anyone send direct messages, or use dmPolicy "allowlist" to admit only the listed senders',
    ]);
    expect(
      parse({ channels: { webchat: { dmPolicy: "allowlist", allowFrom: ["me"] } } }).channels.webchat,
    ).toMatchObject({ dmPolicy: "allowlist", allowFrom: ["me"] });
    const pairing = parse({ channels: { webchat: { dmPolicy: "pairing" } } }).channels.webchat;
    expect(pairing?.dmPolicy).toBe("pairing");
    expect(pairing?.allowFrom).toBeUndefined();
  });

  it("still reports unknown keys on the web chat", () => {
    expect(problems({ channels: { webchat: { botToken: "x" } } })[0]).toMatch(
      /^channels\.webchat\.botToken: unknown key/,
    );
  });
});

describe("channels.<id>.maxMessagesPerReply", () => {
  it("defaults to 10 on every channel, shipped or not, and keeps a written value", () => {
    const config = parse({
      channels: { telegram: {}, slack: { maxMessagesPerReply: 3 }, webchat: {}, mychat: {} },
    });
    expect(config.channels.telegram?.maxMessagesPerReply).toBe(10);
    expect(config.channels.slack?.maxMessagesPerReply).toBe(3);
    expect(config.channels.webchat?.maxMessagesPerReply).toBe(10);
    expect(config.channels.mychat?.maxMessagesPerReply).toBe(10);
  });

  it("names the key and the accepted range for a zero, a fraction, a string or more than 100", () => {
    for (const [bad, found] of [
      [0, "0"],
      [2.5, "2.5"],
      ["10", '"10"'],
      [101, "101"],
    ] as const) {
      expect(problems({ channels: { telegram: { maxMessagesPerReply: bad } } }), found).toEqual([
        `channels.telegram.maxMessagesPerReply: expected a whole number of messages from 1 to 100, found ${found}`,
      ]);
    }
  });
});

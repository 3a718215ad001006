import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkConfigFileExposure } from "./file-exposure.ts";

const LITERAL = `{
  auth: { profiles: { "openai:a": { provider: "openai", mode: "api_key", apiKey: "sk-proj-FAKEfake0123456789abcdef" } } },
  channels: { telegram: { botToken: "123456789:AAFakeFakeFakeFakeFakeFakeFake01234" } },
}`;
const REFERENCES = `{
  auth: { profiles: { "openai:a": { provider: "openai", mode: "api_key", apiKey: "\${OPENAI_API_KEY}" } } },
  channels: { telegram: { botToken: "\${TELEGRAM_BOT_TOKEN}" } },
}`;

function configFile(text: string, mode: number, name = "config.json5"): string {
  const file = join(mkdtempSync(join(tmpdir(), "exposure-")), name);
  writeFileSync(file, text);
  chmodSync(file, mode);
  return file;
}

describe.skipIf(process.platform === "win32")("checkConfigFileExposure", () => {
  it("warns about a file others can read that holds literal secrets", () => {
    const file = configFile(LITERAL, 0o644);
    const [warning, ...more] = checkConfigFileExposure(file);
    expect(more).toEqual([]);
    expect(warning?.mode).toBe(0o644);
    expect(warning?.secrets.map((secret) => secret.path)).toEqual([
      ["auth", "profiles", "openai:a", "apiKey"],
      ["channels", "telegram", "botToken"],
    ]);
    expect(warning?.message).toBe(
      `config file ${file} is readable by its group and all users (mode 0644) and holds 2 literal secrets at ` +
        `auth.profiles["openai:a"].apiKey, channels.telegram.botToken; run \`chmod 600 ${file}\`, ` +
        "or move each value to an environment variable referenced as ${NAME}",
    );
  });

  it("counts the group read bit alone", () => {
    const file = configFile(LITERAL, 0o640);
    expect(checkConfigFileExposure(file)[0]?.message).toMatch(
      /readable by its group \(mode 0640\) and holds/,
    );
  });

  it("is quiet for a file only its owner can read", () => {
    expect(checkConfigFileExposure(configFile(LITERAL, 0o600))).toEqual([]);
    expect(checkConfigFileExposure(configFile(LITERAL, 0o400))).toEqual([]);
  });

  it("is quiet for a readable file whose secrets are all ${ENV} references", () => {
    expect(checkConfigFileExposure(configFile(REFERENCES, 0o644))).toEqual([]);
  });

  it("quotes a path the shell would split", () => {
    const file = configFile(LITERAL, 0o604, "my config.json5");
    const message = checkConfigFileExposure(file)[0]?.message;
    expect(message).toContain("readable by all users (mode 0604)");
    expect(message).toContain(`chmod 600 '${file}'`);
  });

  it("leaves missing and unparsable files to the loader", () => {
    expect(checkConfigFileExposure(join(tmpdir(), "no-such-dir-exposure", "c.json5"))).toEqual([]);
    expect(checkConfigFileExposure(configFile("{ apiKey: 'sk-", 0o644))).toEqual([]);
  });
});

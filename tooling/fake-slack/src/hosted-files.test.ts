// Hosted files: the bytes to the bot token only, Slack's sign-in page to anyone else, 404 for no such file.
import { afterEach, expect, it } from "vitest";
import { type FakeSlack, startFakeSlack } from "./index.ts";

let slack: FakeSlack | undefined;
afterEach(async () => {
  await slack?.close();
  slack = undefined;
});

it("serves a hosted file's bytes to the bot token, the sign-in page without it, and records each download", async () => {
  slack = await startFakeSlack();
  const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
  const file = slack.hostFile({ name: "cat photo.png", mimetype: "image/png", bytes });
  expect(file).toMatchObject({ mimetype: "image/png", size: 7, name: "cat photo.png" });
  const url = String(file.url_private_download);
  expect(url.startsWith(`${slack.origin}/files-pri/`)).toBe(true);

  const withToken = await fetch(url, { headers: { authorization: `Bearer ${slack.botToken}` } });
  expect(withToken.headers.get("content-type")).toBe("image/png");
  expect(new Uint8Array(await withToken.arrayBuffer())).toEqual(bytes);

  const anonymous = await fetch(String(file.url_private));
  expect(anonymous.status).toBe(200);
  expect(await anonymous.text()).toContain("Sign in to Slack");

  const missing = await fetch(`${slack.origin}/files-pri/T-none/x.png`);
  expect(missing.status).toBe(404);
  expect(slack.fileDownloads.map((download) => [download.token, download.status])).toEqual([
    [slack.botToken, 200],
    [undefined, 200],
    [undefined, 404],
  ]);
});

// A photo pushed with bytes, fetched the way a bot does: getFile on the largest size, then the bytes from
// `/file/bot<token>/<file_path>`; smaller sizes, unknown paths and a wrong token do not give them.
import { afterEach, expect, it } from "vitest";
import { type FakeTelegram, startFakeTelegram } from "./server.ts";
import { privateChat, user } from "./updates.ts";

const alice = user(42, "Alice");
let fake: FakeTelegram | undefined;

afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

it("serves a pushed photo's bytes through getFile and the file download path", async () => {
  fake = await startFakeTelegram();
  const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
  const update = fake.pushMessage({ chat: privateChat(alice), from: alice, photo: bytes, caption: "look" });
  const sizes = update.message?.photo ?? [];
  expect(sizes.map((size) => size.width)).toEqual([90, 320, 1280]);
  const largest = sizes[2];
  expect(largest?.file_size).toBe(bytes.length);
  const described = (await (
    await fetch(`${fake.url}/bot${fake.token}/getFile`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ file_id: largest?.file_id }),
    })
  ).json()) as { ok: boolean; result: { file_path: string; file_size: number } };
  expect(described).toMatchObject({ ok: true, result: { file_size: bytes.length } });
  const download = await fetch(`${fake.url}/file/bot${fake.token}/${described.result.file_path}`);
  expect(download.status).toBe(200);
  expect(new Uint8Array(await download.arrayBuffer())).toEqual(bytes);

  const thumbnail = await fetch(`${fake.url}/file/bot${fake.token}/files/${sizes[0]?.file_id}`);
  expect(await thumbnail.text()).toBe("thumbnail 90");
  expect((await fetch(`${fake.url}/file/bot${fake.token}/files/nope`)).status).toBe(404);
  expect((await fetch(`${fake.url}/file/bot1:wrong/${described.result.file_path}`)).status).toBe(401);
  const downloads = fake.calls.filter((call) => call.method === "downloadFile");
  expect(downloads.map((call) => call.served)).toEqual(["ok", "ok", "error:404", "error:401"]);
  expect(fake.sent).toEqual([]);
});

// Builders for the people, chats and inbound messages a test pushes into the fake: users, private chats,
// groups, supergroups (forums with topics) and channels, and the entities Telegram's server adds to a user's
// text by itself (@mentions, /commands, URLs). Owns only plain-object construction; the fake assigns message
// and update ids (inbound-messages.ts, update-queue.ts).
import type { TgChat, TgMessageEntity, TgUser } from "./types.ts";

export function user(
  id: number,
  firstName: string,
  options: { username?: string; lastName?: string } = {},
): TgUser {
  return {
    id,
    is_bot: false,
    first_name: firstName,
    ...(options.lastName === undefined ? {} : { last_name: options.lastName }),
    ...(options.username === undefined ? {} : { username: options.username }),
  };
}

/** A private chat has the user's id as its id (positive), like Telegram. */
export function privateChat(of: TgUser): TgChat {
  return {
    id: of.id,
    type: "private",
    first_name: of.first_name,
    ...(of.last_name === undefined ? {} : { last_name: of.last_name }),
    ...(of.username === undefined ? {} : { username: of.username }),
  };
}

/** A basic group: a negative id. */
export function groupChat(id: number, title: string): TgChat {
  if (id >= 0) throw new Error(`groupChat: Telegram group ids are negative (got ${id})`);
  return { id, type: "group", title };
}

/** A supergroup: an id of the form -100xxxxxxxxxx; `forum: true` enables topics. */
export function supergroupChat(id: number, title: string, options: { forum?: boolean } = {}): TgChat {
  if (id > -1_000_000_000_000) throw new Error(`supergroupChat: ids look like -100xxxxxxxxxx (got ${id})`);
  return { id, type: "supergroup", title, ...(options.forum === true ? { is_forum: true as const } : {}) };
}

export function channelChat(id: number, title: string, username?: string): TgChat {
  if (id > -1_000_000_000_000) throw new Error(`channelChat: ids look like -100xxxxxxxxxx (got ${id})`);
  return { id, type: "channel", title, ...(username === undefined ? {} : { username }) };
}

/**
 * The entities Telegram's server detects in a user's plain text: `@username` mentions, a leading
 * `/command[@bot]` and http(s) URLs. Offsets and lengths are UTF-16 code units.
 */
export function detectEntities(text: string): TgMessageEntity[] {
  const entities: TgMessageEntity[] = [];
  const command = /^\/[A-Za-z0-9_]{1,32}(?:@[A-Za-z0-9_]{3,32})?/.exec(text);
  if (command !== null) entities.push({ type: "bot_command", offset: 0, length: command[0].length });
  for (const match of text.matchAll(/(^|[^A-Za-z0-9_@])(@[A-Za-z][A-Za-z0-9_]{3,31})(?![A-Za-z0-9_])/g)) {
    const lead = match[1] ?? "";
    const mention = match[2] ?? "";
    entities.push({ type: "mention", offset: match.index + lead.length, length: mention.length });
  }
  for (const match of text.matchAll(/https?:\/\/[^\s]+/g)) {
    entities.push({ type: "url", offset: match.index, length: match[0].length });
  }
  return entities.sort((a, b) => a.offset - b.offset);
}

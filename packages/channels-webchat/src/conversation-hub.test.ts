import { describe, expect, it } from "vitest";
import { ConversationHub, sseFrame, type WebchatEvent } from "./conversation-hub.ts";

describe("ConversationHub", () => {
  it("numbers events per conversation and replays only what follows the given id", () => {
    const hub = new ConversationHub();
    hub.publish("a", "block", { text: "1" });
    hub.publish("b", "block", { text: "other" });
    hub.publish("a", "message", { text: "2" });
    const seen: WebchatEvent[] = [];
    hub.subscribe("a", (event) => seen.push(event), 1);
    hub.publish("a", "edit", { text: "3" });
    expect(seen.map((e) => [e.id, e.type])).toEqual([
      [2, "message"],
      [3, "edit"],
    ]);
    expect(hub.lastId("b")).toBe(1);
  });

  it("drops the least recently used idle conversation, never one with a subscriber", () => {
    const hub = new ConversationHub({ maxConversations: 2 });
    const unsubscribe = hub.subscribe("watched", () => {});
    hub.publish("idle", "block", {});
    hub.publish("new", "block", {});
    expect(hub.conversationCount).toBe(2);
    expect(hub.lastId("idle")).toBe(0);
    expect(hub.lastId("new")).toBe(1);
    unsubscribe();
  });

  it("replays everything kept when the given id is from before a restart", () => {
    const hub = new ConversationHub();
    hub.publish("a", "block", { text: "after restart" });
    const seen: WebchatEvent[] = [];
    hub.subscribe("a", (event) => seen.push(event), 57);
    expect(seen.map((e) => e.data.text)).toEqual(["after restart"]);
  });

  it("writes one SSE frame per event with the JSON on one data line", () => {
    const hub = new ConversationHub();
    const event = hub.publish("a", "message", { text: "two\nlines" });
    expect(sseFrame(event)).toBe('id: 1\nevent: message\ndata: {"text":"two\\nlines"}\n\n');
  });
});

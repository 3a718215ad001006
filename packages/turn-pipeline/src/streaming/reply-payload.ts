// The reply payload every entry point delivers, shared by blocks and the final list.
export type ReplyPayload = {
  text?: string;
  mediaUrls?: string[];
  replyToId?: string;
  replyToCurrent?: boolean;
  audioAsVoice?: boolean;
  isError?: boolean;
};

// Who the fake Slack workspace and app are: the bot and app tokens it accepts, the bot's user and bot ids, the
// team, the app id and the signing secret, with their defaults. Owns only these values; every part reads them.

export interface FakeSlackOptions {
  readonly botToken?: string;
  /** The app-level token (`xapp-…`) Socket Mode's apps.connections.open requires. */
  readonly appToken?: string;
  readonly botUserId?: string;
  readonly botId?: string;
  readonly teamId?: string;
  readonly appId?: string;
  /** The app's signing secret, used by `deliverEvent`. */
  readonly signingSecret?: string;
}

export interface SlackIdentity {
  readonly botToken: string;
  readonly appToken: string;
  readonly botUserId: string;
  readonly botId: string;
  readonly teamId: string;
  readonly appId: string;
  readonly signingSecret: string;
}

export function resolveIdentity(options: FakeSlackOptions): SlackIdentity {
  return {
    botToken: options.botToken ?? "xoxb-fake-bot-token",
    botUserId: options.botUserId ?? "UBOT0001",
    botId: options.botId ?? "BBOT0001",
    teamId: options.teamId ?? "T0FAKE01",
    appId: options.appId ?? "A0FAKE01",
    signingSecret: options.signingSecret ?? "fake-signing-secret",
    appToken: options.appToken ?? "xapp-fake-app-token",
  };
}

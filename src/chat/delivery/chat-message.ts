import type { ChatChannel } from '../chat-channels';
import type { ChatData, ChatNotification, WebhookFormat } from '../schemas/chat-notification.schema';

/** A notification as it is shown: the app and channel by name, the summary and the key fields. */
export interface ChatMessage {
  appId: string;
  appName: string;
  channel: ChatChannel;
  /** What the app's `chatChannels` map calls this channel (e.g. `#support`), else the channel itself. */
  channelLabel: string;
  event: string;
  summary: string;
  data: ChatData;
}

const SLACK_HOSTS = new Set(['hooks.slack.com', 'hooks.slack-gov.com']);
const DISCORD_HOSTS = new Set(['discord.com', 'discordapp.com', 'ptb.discord.com', 'canary.discord.com']);

/** The body a webhook URL takes: Slack's and Discord's incoming webhooks by host, anything else JSON. */
export function webhookFormatOf(url: URL): WebhookFormat {
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (SLACK_HOSTS.has(host)) return 'slack';
  if (DISCORD_HOSTS.has(host) && url.pathname.startsWith('/api/webhooks/')) return 'discord';
  return 'json';
}

/** Discord refuses content over 2,000 characters; Slack folds long texts. */
const TEXT_LIMIT: Record<WebhookFormat, number> = { slack: 3_000, discord: 2_000, json: 3_000 };
const VALUE_LIMIT = 300;

/** `firstName` → `first name`. */
const labelOf = (key: string) => key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();

/** Ids (`ticketId`) and times (`periodEndAt`) are for machines: in JSON `data`, not in the text. */
const isShown = (key: string) => !/(Id|At)$/.test(key) && key !== 'excerpt';

function oneLine(value: unknown, limit = VALUE_LIMIT): string {
  const flat = String(value).replace(/\s+/g, ' ').trim();
  return flat.length <= limit ? flat : `${flat.slice(0, limit - 1)}…`;
}

/**
 * What people wrote must not turn into markup: in Slack `<!channel>` pings everyone and `<url|text>` hides
 * a link (Slack asks for `&`, `<`, `>` as entities); in Discord `*`, `_`, `~`, `` ` ``, `|` and `[…](…)`
 * format text (escaped with a backslash; mentions are switched off in the payload instead).
 */
const ESCAPE: Record<WebhookFormat, (text: string) => string> = {
  slack: (text) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'),
  discord: (text) => text.replace(/[\\*_~`|[\]]/g, '\\$&'),
  json: (text) => text,
};

/**
 * Three lines at most: `<app> · <channel> · <summary>`, the key fields (`subject: Broken item · email:
 * jane@example.com`), and a quoted excerpt when there is one.
 */
export function renderText(message: ChatMessage, format: WebhookFormat): string {
  const escape = ESCAPE[format];
  const head = [message.appName, message.channelLabel, message.summary].map((part) =>
    escape(oneLine(part, 200)),
  );
  const fields = Object.entries(message.data)
    .filter(([key, value]) => isShown(key) && value !== null && value !== '')
    .map(([key, value]) => `${labelOf(key)}: ${escape(oneLine(value))}`);
  // A line opening with `#`, `>` or `-` is a heading, quote or list item in Discord (only the first line
  // opens with text from outside: the app's name).
  const first = head.join(' · ');
  const lines = [format === 'discord' ? first.replace(/^([#>-])/, '\\$1') : first];
  if (fields.length > 0) lines.push(fields.join(' · '));
  const excerpt = message.data.excerpt;
  if (typeof excerpt === 'string' && excerpt !== '') lines.push(`“${escape(oneLine(excerpt))}”`);
  const text = lines.join('\n');
  const limit = TEXT_LIMIT[format];
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`;
}

/** The request body for a destination of this format. */
export function payloadFor(format: WebhookFormat, message: ChatMessage): Record<string, unknown> {
  const text = renderText(message, format);
  switch (format) {
    case 'slack':
      return { text };
    case 'discord':
      // No @everyone, @here or user pings, whatever the text contains.
      return { content: text, allowed_mentions: { parse: [] } };
    case 'json':
      return {
        text,
        channel: message.channel,
        appId: message.appId,
        event: message.event,
        data: message.data,
      };
  }
}

/**
 * `ticketId`, `contactId`, `campaignId`: the fields of a notification's data that name records, not people.
 */
const isIdField = (key: string) => /Id$/.test(key);

/**
 * A notification as the log shows it when no webhook is configured: ids only (the notification, its app,
 * channel and event, and the `…Id` fields of its data). Its text names people (addresses, first names, what
 * they wrote), and a log line is out of reach of a GDPR erasure; the ids lead to the records, which are not.
 */
export function logLine(
  notification: Pick<ChatNotification, '_id' | 'appId' | 'channel' | 'event' | 'data'>,
): string {
  const ids = Object.entries(notification.data)
    .filter(([key, value]) => isIdField(key) && value !== null && value !== '')
    .map(([key, value]) => `${key}=${String(value)}`);
  const head = `${String(notification._id)} of app ${notification.appId}: ${notification.channel} ${notification.event}`;
  return ids.length > 0 ? `${head} (${ids.join(', ')})` : head;
}

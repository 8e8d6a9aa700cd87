/** The notification channels of the API contract. Each app may route each channel to a webhook of its own. */
export const CHAT_CHANNELS = [
  'tickets',
  'wants',
  'feedback',
  'newsletter',
  'email',
  'inbound',
  'agent',
  'digest',
] as const;
export type ChatChannel = (typeof CHAT_CHANNELS)[number];

/** A topic key: short, URL- and token-safe (it travels in unsubscribe tokens and form fields). */
export const TOPIC_KEY_PATTERN = /^[a-z0-9][a-z0-9-]{0,39}$/;
export const TOPIC_NAME_MAX = 100;
/** Topics per app: the preference page lists them all, so the list stays short. */
export const TOPICS_MAX = 20;

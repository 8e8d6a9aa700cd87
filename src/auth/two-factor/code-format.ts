/** What a second-factor field takes: a 6-digit TOTP code or a recovery code (`xxxxx-xxxxx`). */
export const SECOND_FACTOR_CODE = /^\s*(\d{6}|[a-z0-9]{5}[\s-]?[a-z0-9]{5})\s*$/i;
export const SECOND_FACTOR_MESSAGE = 'code must be 6 digits from the authenticator app or a recovery code';

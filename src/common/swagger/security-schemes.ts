/** Names of the security schemes; the credential decorators refer to them. */
export const SECURITY = {
  bearer: 'bearer',
  apiKey: 'api-key',
  appKey: 'app-key',
  endUser: 'end-user',
} as const;

export type SecurityScheme = (typeof SECURITY)[keyof typeof SECURITY];

/** What the guard and each strategy answer when a credential is missing (401) or not enough (403). */
export const REFUSALS: Record<SecurityScheme, { 401: string; 403: string }> = {
  [SECURITY.bearer]: { 401: 'Missing bearer token', 403: 'Your role does not allow this operation' },
  [SECURITY.apiKey]: { 401: 'Missing X-API-Key header', 403: 'This API key belongs to another app' },
  [SECURITY.appKey]: { 401: 'Missing X-App-Key header', 403: 'Origin not allowed for this app' },
  [SECURITY.endUser]: { 401: 'Missing X-End-User-Token header', 403: 'This token belongs to another app' },
};

/**
 * Emitted (with `emitAsync`) while an app is being deleted, before its record is removed. Listeners that
 * must not leave anything usable behind (its API keys) do their work then; if one throws, the deletion
 * stops and the app stays. Listeners must use `@OnEvent(APP_DELETED, { suppressErrors: false })`.
 */
export const APP_DELETED = 'app.deleted';

export interface AppDeletedEvent {
  appId: string;
}

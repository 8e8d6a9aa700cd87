/**
 * Domain events of the people module. `contact.erased` is emitted with `emitAsync` during a GDPR delete and
 * awaited: every module that stores a person's address listens to it (`@OnEvent(ContactEvents.Erased,
 * { suppressErrors: false })`) and replaces the address by `placeholder` in its own collections. A listener
 * that throws fails the delete, which can then be retried: every listener must be safe to run again.
 */
export const ContactEvents = {
  Erased: 'contact.erased',
} as const;

export interface ContactErasedEvent {
  contactId: string;
  /** The erased address, lower-cased. */
  email: string;
  /** What replaces the address wherever it was stored: unique per person, reveals nothing of it. */
  placeholder: string;
}

/** Domain events of people signing up; the chat notifications (channel `newsletter`) subscribe to them. */
export const SignupEvents = {
  /** Someone joined an app's newsletter (joinlist or API); not emitted for a signup that changed nothing. */
  NewsletterSignup: 'newsletter.signup',
} as const;

export class NewsletterSignupEvent {
  constructor(
    readonly appId: string,
    readonly contactId: string,
    readonly email: string,
    readonly firstName: string | null,
    /** `joinlist`, `api`, or what the signup form named. */
    readonly source: string,
    readonly referralUrl: string | null,
  ) {}
}

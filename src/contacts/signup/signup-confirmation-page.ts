import { page } from '../unsubscribe/unsubscribe-page';

/**
 * The confirmation link's pages (built like the unsubscribe pages). The GET page is the same for every
 * token and changes nothing: only its button (a POST to the same URL) confirms, so a link scanner that
 * follows the link subscribes no one.
 */
export const CONFIRM_SIGNUP_PAGE = page(
  'Confirm your subscription',
  `<h1>Confirm your subscription</h1>
<p>Do you want to receive this newsletter?</p>
<form method="post" action="">
<button type="submit">Yes, subscribe me</button>
</form>`,
);

export const SIGNUP_CONFIRMED_PAGE = page(
  'Subscribed',
  `<h1 role="status">You are subscribed</h1>
<p>Thank you. Every newsletter has a link to unsubscribe at any time.</p>`,
);

/** An unknown, expired or already used link: the person can sign up again where they did. */
export const SIGNUP_LINK_INVALID_PAGE = page(
  'Link no longer valid',
  `<h1 role="status">This link is no longer valid</h1>
<p>It may have expired or been used already. To subscribe, sign up again where you first did.</p>`,
);

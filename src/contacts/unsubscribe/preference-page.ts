import { escapeHtml } from '../joinlist/welcome-email';
import type { TopicChoice } from './topic-preferences';
import { page } from './unsubscribe-page';

/** The form field that carries the page's token back: a POST without the same token changes nothing. */
export const CSRF_FIELD = 'csrf';
export const TOPIC_FIELD = 'topic';
export const ACTION_FIELD = 'action';
export const SAVE_ACTION = 'save';
export const LEAVE_ACTION = 'leave';

/**
 * The preference page of a subscriber whose app has topics (docs/api/newsletters.md "Topics and the
 * preference page"): a checkbox per topic, and two forms posting back to the page's own URL, so it works
 * without JavaScript under the unsubscribe pages' Content-Security-Policy. Every text is escaped: topic
 * names are written by staff.
 */
export function preferencePage(token: string, choices: TopicChoice[]): string {
  const csrf = `<input type="hidden" name="${CSRF_FIELD}" value="${escapeHtml(token)}">`;
  const boxes = choices
    .map(
      (choice) =>
        `<label><input type="checkbox" name="${TOPIC_FIELD}" value="${escapeHtml(choice.key)}"` +
        `${choice.kept ? ' checked' : ''}>${escapeHtml(choice.name)}</label>`,
    )
    .join('\n');
  return page(
    'Your e-mail preferences',
    `<h1>Your e-mail preferences</h1>
<form method="post" action="">
${csrf}
<fieldset>
<legend>Keep receiving e-mails about:</legend>
${boxes}
</fieldset>
<button type="submit" name="${ACTION_FIELD}" value="${SAVE_ACTION}">Save my choices</button>
</form>
<form method="post" action="">
${csrf}
<p>Or stop all of these e-mails:</p>
<button type="submit" class="secondary" name="${ACTION_FIELD}" value="${LEAVE_ACTION}">
Unsubscribe from everything</button>
</form>`,
  );
}

/** The answer to a saved choice, whatever the token was. */
export const SAVED_PAGE = page(
  'Preferences saved',
  `<h1 role="status">Your choices are saved</h1>
<p>You will only receive e-mails about the topics you kept.</p>`,
);

/** The answer to a topic's one-click unsubscribe. */
export const TOPIC_DONE_PAGE = page(
  'Unsubscribed',
  `<h1 role="status">You are unsubscribed from this topic</h1>
<p>You will not receive e-mails about it any more. Your other choices are unchanged.</p>`,
);

/** A form whose token field does not match its URL (not sent by the page): nothing is changed. */
export const NOT_CHANGED_PAGE = page(
  'Nothing changed',
  `<h1 role="status">Nothing was changed</h1>
<p>Open the link in one of our e-mails again to change your choices.</p>`,
);

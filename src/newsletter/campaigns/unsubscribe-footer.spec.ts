import { UNSUBSCRIBE_FOOTER_HTML, withUnsubscribeFooter, withUnsubscribeText } from './unsubscribe-footer';

describe('unsubscribe footer', () => {
  it('is added to HTML without a visible unsubscribe link, inside the body when there is one', () => {
    expect(withUnsubscribeFooter('<p>Hi</p>')).toBe(`<p>Hi</p>${UNSUBSCRIBE_FOOTER_HTML}`);
    expect(withUnsubscribeFooter('<html><body><p>Hi</p></body></html>')).toBe(
      `<html><body><p>Hi</p>${UNSUBSCRIBE_FOOTER_HTML}</body></html>`,
    );
    // The URL in text only is no link a reader can click.
    expect(withUnsubscribeFooter('<p>{{unsubscribeUrl}}</p>')).toContain(UNSUBSCRIBE_FOOTER_HTML);
  });

  it('leaves HTML with its own unsubscribe link as it is', () => {
    for (const html of [
      '<a href="{{unsubscribeUrl}}">Leave</a>',
      "<A class='x' HREF='{{{ unsubscribeUrl }}}'>Leave</A>",
      '<a href={{unsubscribeUrl}}>Leave</a>',
    ])
      expect(withUnsubscribeFooter(html)).toBe(html);
  });

  it('adds the link to a text part that never names it', () => {
    expect(withUnsubscribeText('Hi')).toBe('Hi\n\nUnsubscribe: {{unsubscribeUrl}}\n');
    expect(withUnsubscribeText('Hi, leave at {{unsubscribeUrl}}')).toBe('Hi, leave at {{unsubscribeUrl}}');
    expect(withUnsubscribeText(null)).toBeNull();
  });
});

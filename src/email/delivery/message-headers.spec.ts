import {
  broadcastHeaders,
  foldBracketedUrls,
  formatAddress,
  HEADER_LINE_LIMIT,
  senderDomain,
  unsubscribeHeaders,
} from './message-headers';

const TOKEN =
  'WyJ1bnN1YnNjcmliZSIsImJlZmE3NDIwMWViOTI5ZWZmMDFhNWJjYSIsImFwcC00LTljYTgxNiJd.FYrEGg26xXbKcGb7k4uViQ';

describe('message headers', () => {
  it('takes the Message-ID domain from the default sender', () => {
    expect(senderDomain('Admin Service <no-reply@Mail.Example.com>')).toBe('mail.example.com');
    expect(senderDomain('bot@example.org')).toBe('example.org');
    expect(senderDomain('nobody')).toBe('localhost');
  });

  it('adds the RFC 8058 one-click headers only with an unsubscribe URL', () => {
    expect(unsubscribeHeaders(undefined)).toEqual({});
    expect(unsubscribeHeaders('https://x.test/u/abc')).toEqual({
      'List-Unsubscribe': '<https://x.test/u/abc>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    });
  });

  it('quotes a sender name without letting it inject headers', () => {
    expect(formatAddress({ name: 'Ada "A"\r\nBcc: x', email: 'ada@example.com' })).toBe(
      '"Ada ABcc: x" <ada@example.com>',
    );
    expect(formatAddress({ email: 'ada@example.com' })).toBe('ada@example.com');
  });

  it('builds the broadcast headers: Feedback-ID campaign:app:stream:sender, List-Id per app, bulk markers', () => {
    expect(
      broadcastHeaders({ campaignId: '665f1a2b', appId: 'lumen-club', senderDomain: 'lumen.example' }),
    ).toEqual({
      'Feedback-ID': '665f1a2b:lumen-club:broadcast:lumen.example',
      'List-ID': '<lumen-club.lumen.example>',
      Precedence: 'bulk',
      'Auto-Submitted': 'auto-generated',
    });
  });

  it('folds a long List-Unsubscribe at 78 characters inside its brackets, losing nothing', () => {
    const value = `<https://links.lumen.example/unsubscribe/${TOKEN}>`;
    expect(`List-Unsubscribe: ${value}`.length).toBeGreaterThan(130);
    const folded = foldBracketedUrls('List-Unsubscribe', value);
    const lines = folded.split('\r\n');
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(HEADER_LINE_LIMIT);
    for (const line of lines.slice(1)) expect(line).toMatch(/^ \S/);
    // A receiver unfolds and drops the whitespace inside the brackets (RFC 2369): the URL comes back whole.
    expect(folded.replace(/^List-Unsubscribe: /, '').replace(/\s+/g, '')).toBe(value);
    // Two URLs fold between them first; a short field stays on one line.
    const two = foldBracketedUrls('List-Unsubscribe', `<mailto:u@lumen.example>, ${value}`);
    expect(two.split('\r\n').every((line) => line.length <= HEADER_LINE_LIMIT)).toBe(true);
    expect(foldBracketedUrls('List-Unsubscribe', '<https://x.test/u/abc>')).toBe(
      'List-Unsubscribe: <https://x.test/u/abc>',
    );
  });
});

import { formatAddress, senderDomain, unsubscribeHeaders } from './message-headers';

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
});

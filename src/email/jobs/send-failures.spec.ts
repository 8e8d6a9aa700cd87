import { smtpBounceOf } from './send-failures';

const answer = (responseCode: number, command = 'RCPT TO') =>
  Object.assign(new Error('refused'), { responseCode, command, code: 'EENVELOPE' });

describe('smtpBounceOf', () => {
  it('a 5xx to RCPT is a hard bounce at once; a 5xx to DATA is not about the address', () => {
    expect(smtpBounceOf(answer(550), false)).toBe('hard');
    expect(smtpBounceOf(answer(554, 'DATA'), true)).toBeNull();
  });

  it('a 4xx is a soft bounce on the last attempt only; no SMTP answer is never a bounce', () => {
    expect(smtpBounceOf(answer(452), false)).toBeNull();
    expect(smtpBounceOf(answer(452), true)).toBe('soft');
    expect(smtpBounceOf(answer(451, 'DATA'), true)).toBe('soft');
    expect(smtpBounceOf(Object.assign(new Error('reset'), { code: 'ECONNRESET' }), true)).toBeNull();
  });
});

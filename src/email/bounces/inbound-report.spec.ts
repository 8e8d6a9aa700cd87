import { readReport } from './inbound-report';

const status = (fields: string) => ({ reportType: 'delivery-status', text: fields, parts: [] });

describe('readReport', () => {
  it('reads a failed recipient of a DSN: 5.x.x hard, 4.x.x soft', () => {
    const dsn =
      'Reporting-MTA: dns; relay\n\nFinal-Recipient: rfc822; Ada@Example.com\nAction: failed\nStatus: 5.1.1\n';
    expect(readReport(status(dsn))).toEqual({
      type: 'bounced',
      bounceType: 'hard',
      recipient: 'ada@example.com',
      status: '5.1.1',
    });
    expect(readReport(status(dsn.replace('5.1.1', '4.2.2')))).toMatchObject({ bounceType: 'soft' });
  });

  it('ignores delays, deliveries, other report types and garbage', () => {
    expect(readReport(status('Final-Recipient: rfc822; a@b.c\nAction: delayed\nStatus: 4.4.1'))).toBeNull();
    expect(readReport(status('Final-Recipient: rfc822; a@b.c\nAction: delivered\nStatus: 2.0.0'))).toBeNull();
    expect(readReport({ reportType: null, text: 'Action: failed\nStatus: 5.1.1', parts: [] })).toBeNull();
    expect(readReport(status('\u0000\u0001 ::: \n\n\n'))).toBeNull();
  });

  it('reads an ARF complaint, never `not-spam`', () => {
    const part = (type: string) => ({
      contentType: 'message/feedback-report',
      content: Buffer.from(`Feedback-Type: ${type}\r\nVersion: 1\r\nOriginal-Rcpt-To: <ada@example.com>\r\n`),
    });
    expect(readReport({ reportType: 'feedback-report', text: '', parts: [part('abuse')] })).toEqual({
      type: 'complained',
      recipient: 'ada@example.com',
      feedbackType: 'abuse',
    });
    expect(readReport({ reportType: 'feedback-report', text: '', parts: [part('not-spam')] })).toBeNull();
  });
});

import { createTransport } from 'nodemailer';
import { composedMail, type OutgoingMail, toNodemailer } from './mail-transport';
import { broadcastHeaders } from './message-headers';
import { rawMimeOf } from './mime-message';

/**
 * What nodemailer composes for the mail (the path every message took before), with a fixed boundary and date.
 */
async function composed(mail: OutgoingMail, baseBoundary: string, date: Date): Promise<string> {
  const transport = createTransport({ streamTransport: true, buffer: true });
  const info = await transport.sendMail({ ...composedMail(mail), baseBoundary, date } as never);
  return (info.message as Buffer).toString('utf8');
}

/** A deterministic generator, so a failing case can be found again. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

const pick = <T>(next: () => number, items: readonly T[]): T => items[Math.floor(next() * items.length)];

/** Text made of the pieces that decide the encoding: long lines, `=`, spaces and tabs before breaks, dots. */
function textOf(next: () => number): string {
  const pieces = [
    'word ',
    'newsletter ',
    '=',
    ' = ',
    ' ',
    '\t',
    '\n',
    '\r\n',
    '\r',
    ' \n',
    '\t\r\n',
    '.',
    '\n.',
    '\n..\n',
    '<a href="https://shop.example.com/sale?a=1&b=2">sale</a>',
    'x'.repeat(70),
    'y'.repeat(77),
    'z'.repeat(200),
    '=3D',
    '!?,',
  ];
  let text = '';
  const length = Math.floor(next() * 60);
  for (let i = 0; i < length; i += 1) text += pick(next, pieces);
  return text || 'a';
}

const ADDRESSES = [
  'reader1@bench.test',
  'Reader.One+tag@Bench.TEST',
  '"Bench" <news@example.com>',
  'Bench News <news@Example.com>',
  '"News_2 of Bench" <news@example.com>',
];

describe('rawMimeOf: the same bytes as nodemailer', () => {
  it('writes what nodemailer composes, for a corpus of plain-ASCII messages', async () => {
    const next = random(2_026);
    for (let i = 0; i < 400; i += 1) {
      const mail: OutgoingMail = {
        messageId: `6650c0ffee${i}@example.com`,
        idempotencyKey: `email-job/${i}`,
        from: pick(next, ADDRESSES),
        to: pick(next, ADDRESSES),
        replyTo: next() < 0.3 ? pick(next, ADDRESSES) : undefined,
        subject: pick(next, [
          'News for Reader 1',
          '',
          ' spaced subject ',
          'A subject long enough to be folded by nodemailer onto a second line of the header block',
          'tab\tinside',
          'x'.repeat(120),
        ]),
        html: textOf(next),
        text: textOf(next),
        headers:
          next() < 0.8
            ? {
                'List-Unsubscribe': `<https://example.com/unsubscribe/${'t'.repeat(Math.floor(next() * 200))}>`,
                'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
                ...(next() < 0.5
                  ? broadcastHeaders({ campaignId: `c${i}`, appId: 'my-shop', senderDomain: 'example.com' })
                  : {}),
              }
            : {},
      };
      const baseBoundary = (i * 7_919).toString(16).padStart(16, '0');
      const date = new Date(Date.UTC(2026, 0, 1, 0, 0, i));
      const raw = rawMimeOf(mail, { baseBoundary, date });
      expect(raw).not.toBeNull();
      expect({ i, raw }).toEqual({ i, raw: await composed(mail, baseBoundary, date) });
    }
  });

  it('writes the long lines of a large part as nodemailer does past its 128 kB scan', async () => {
    const mail: OutgoingMail = {
      messageId: 'big@example.com',
      idempotencyKey: 'email-job/big',
      from: 'news@example.com',
      to: 'reader@example.com',
      subject: 'Big',
      html: `<p>${'Short line.\n'.repeat(12_000)}</p>`,
      text: 'Short line.\n'.repeat(12_000),
      headers: {},
    };
    const date = new Date(Date.UTC(2026, 0, 1));
    expect(rawMimeOf(mail, { baseBoundary: 'b16b00b5b16b00b5', date })).toEqual(
      await composed(mail, 'b16b00b5b16b00b5', date),
    );
  });

  it('leaves to nodemailer what it would write differently', () => {
    const base: OutgoingMail = {
      messageId: 'id@example.com',
      idempotencyKey: 'email-job/id',
      from: 'news@example.com',
      to: 'reader@example.com',
      subject: 'News',
      html: '<p>Hi</p>',
      text: 'Hi',
      headers: {},
    };
    const others: Partial<OutgoingMail>[] = [
      { html: undefined },
      { text: undefined },
      { subject: 'Новости' },
      { subject: 'two\nlines' },
      { html: '<p>Grüße</p>' },
      { text: 'Grüße' },
      { from: '"Café" <news@example.com>' },
      { from: '"O\'Brien, Ada" <news@example.com>' },
      { to: 'user name@example.com' },
      { to: 'reader@exämple.com' },
      { headers: { 'X-Campaign': 'spring' } },
      { headers: { 'list-unsubscribe': '<https://example.com/u>' } },
      // A provider's custom arguments (SendGrid's X-SMTPAPI) are written as given, by nodemailer.
      { preparedHeaders: { 'X-SMTPAPI': '{"unique_args":{"app_message_id":"id@example.com"}}' } },
    ];
    for (const other of others) expect(rawMimeOf({ ...base, ...other })).toBeNull();
  });

  it('is what the transports hand nodemailer for the common message, composing the others', () => {
    const mail: OutgoingMail = {
      messageId: 'id@example.com',
      idempotencyKey: 'email-job/id',
      from: 'news@example.com',
      to: 'reader@example.com',
      subject: 'News',
      html: '<p>Hi</p>',
      text: 'Hi',
      headers: {},
    };
    expect(toNodemailer(mail)).toEqual({
      messageId: '<id@example.com>',
      from: 'news@example.com',
      to: 'reader@example.com',
      raw: expect.stringContaining('Subject: News\r\n') as unknown,
    });
    expect(toNodemailer({ ...mail, subject: 'Новости' })).toMatchObject({
      subject: 'Новости',
      html: '<p>Hi</p>',
    });
  });
});

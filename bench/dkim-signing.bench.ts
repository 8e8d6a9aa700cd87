/**
 * DKIM signing benchmark: the CPU one campaign message costs to compose in the SMTP transport's form
 * (toNodemailer, nodemailer's stream transport), unsigned and signed with the sender domain's RSA-2048 key,
 * given as PEM text (parsed for every message) or parsed once (as the service keeps it).
 * Reported: CPU µs per message for each, and the difference (the signing cost per message); for a
 * 100,000-recipient campaign, the CPU seconds signing adds.
 *
 *   npm run bench -- dkim-signing        (BENCH_MESSAGES=2000 messages per round by default)
 */
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { cpuUsage } from 'node:process';
import { createTransport } from 'nodemailer';
import { toNodemailer, type OutgoingMail } from '../src/email/delivery/mail-transport';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 2_000);
const CAMPAIGN = 100_000;

const { privateKey: pem } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
/** Parsed once, as the service keeps it (SendingIdentities). */
const privateKey = createPrivateKey(pem);

/** How a message is signed: not at all, with the key as PEM text (parsed per message), or parsed once. */
type Signing = 'none' | 'pem' | 'parsed';

/** A campaign message of a realistic size: about 6 KB of HTML and its text part, unsubscribe headers. */
const mail = (i: number, signing: Signing): OutgoingMail => ({
  messageId: `${i.toString(16).padStart(24, '0')}@lumen.example`,
  idempotencyKey: `email-job/${i}`,
  from: '"Lumen Club" <news@lumen.example>',
  to: `reader${i}@example.net`,
  subject: 'The November letter',
  html: `<p>Hello reader ${i}</p>${'<p>Some news of the club, with <a href="https://links.lumen.example/c/x">a link</a>.</p>'.repeat(60)}`,
  text: `Hello reader ${i}\n${'Some news of the club.\n'.repeat(60)}`,
  headers: {
    'List-Unsubscribe': `<https://links.lumen.example/unsubscribe/${i}>`,
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
  },
  ...(signing === 'none'
    ? {}
    : {
        dkim: {
          domainName: 'lumen.example',
          keySelector: 's202611-abc123',
          // The PEM form is what the service passed before it kept the key parsed.
          privateKey: signing === 'parsed' ? privateKey : (pem as unknown as KeyObject),
        },
      }),
});

async function round(signing: Signing): Promise<number> {
  const transport = createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  const before = cpuUsage();
  for (let i = 0; i < MESSAGES; i += 1) await transport.sendMail(toNodemailer(mail(i, signing)));
  const used = cpuUsage(before);
  transport.close();
  return (used.user + used.system) / MESSAGES;
}

async function main(): Promise<void> {
  await round('parsed'); // warm-up: JIT
  const results: Record<Signing, number[]> = { none: [], pem: [], parsed: [] };
  for (let i = 0; i < 2; i += 1) {
    for (const signing of ['none', 'pem', 'parsed'] as const) results[signing].push(await round(signing));
  }
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const plain = mean(results.none);
  console.log(`messages per round: ${MESSAGES}, two rounds each, alternating`);
  console.log(`unsigned: ${plain.toFixed(0)} µs CPU/message`);
  for (const signing of ['pem', 'parsed'] as const) {
    const signed = mean(results[signing]);
    const label = signing === 'pem' ? 'key as PEM text' : 'key parsed once';
    console.log(
      `DKIM-signed (RSA-2048, ${label}): ${signed.toFixed(0)} µs CPU/message; signing cost ` +
        `${(signed - plain).toFixed(0)} µs/message, ` +
        `${(((signed - plain) * CAMPAIGN) / 1e6).toFixed(1)} CPU s per ${CAMPAIGN.toLocaleString('en')} recipients`,
    );
  }
}

void main();

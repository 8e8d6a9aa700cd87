/**
 * DKIM signing benchmark: the CPU one campaign message costs to compose in the SMTP transport's form
 * (toNodemailer, nodemailer's stream transport), with and without the sender domain's RSA-2048 signature.
 * Reported: CPU µs per message for each, and the difference (the signing cost per message); for a
 * 100,000-recipient campaign, the CPU seconds signing adds.
 *
 *   npm run bench -- dkim-signing        (BENCH_MESSAGES=2000 messages per round by default)
 */
import { generateKeyPairSync } from 'node:crypto';
import { cpuUsage } from 'node:process';
import { createTransport } from 'nodemailer';
import { toNodemailer, type OutgoingMail } from '../src/email/delivery/mail-transport';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 2_000);
const CAMPAIGN = 100_000;

const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});

/** A campaign message of a realistic size: about 6 KB of HTML and its text part, unsubscribe headers. */
const mail = (i: number, signed: boolean): OutgoingMail => ({
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
  ...(signed ? { dkim: { domainName: 'lumen.example', keySelector: 's202611-abc123', privateKey } } : {}),
});

async function round(signed: boolean): Promise<number> {
  const transport = createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  const before = cpuUsage();
  for (let i = 0; i < MESSAGES; i += 1) await transport.sendMail(toNodemailer(mail(i, signed)));
  const used = cpuUsage(before);
  transport.close();
  return (used.user + used.system) / MESSAGES;
}

async function main(): Promise<void> {
  await round(true); // warm-up: JIT and the key's first parse
  const results = { plain: [] as number[], signed: [] as number[] };
  for (let i = 0; i < 2; i += 1) {
    results.plain.push(await round(false));
    results.signed.push(await round(true));
  }
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const plain = mean(results.plain);
  const signed = mean(results.signed);
  console.log(`messages per round: ${MESSAGES}, two rounds each, alternating`);
  console.log(`unsigned: ${plain.toFixed(0)} µs CPU/message`);
  console.log(`DKIM-signed (RSA-2048): ${signed.toFixed(0)} µs CPU/message`);
  console.log(
    `signing cost: ${(signed - plain).toFixed(0)} µs/message, ` +
      `${(((signed - plain) * CAMPAIGN) / 1e6).toFixed(1)} CPU s per ${CAMPAIGN.toLocaleString('en')} recipients`,
  );
}

void main();

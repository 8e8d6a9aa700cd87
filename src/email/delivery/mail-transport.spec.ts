import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OutboxTransport, type OutgoingMail } from './mail-transport';

describe('OutboxTransport transfer encodings', () => {
  let directory: string;
  let transport: OutboxTransport;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'outbox-'));
    transport = new OutboxTransport(directory);
  });
  afterEach(() => {
    transport.onApplicationShutdown();
    rmSync(directory, { recursive: true, force: true });
  });

  const written = async (mail: Partial<OutgoingMail>) => {
    const receipt = await transport.send({
      messageId: 'job-1@example.com',
      idempotencyKey: 'email-job/job-1',
      from: 'news@example.com',
      to: 'ada@example.com',
      subject: 'News',
      headers: {},
      ...mail,
    });
    return readFileSync(receipt.response.replace(/^written to /, ''), 'utf8');
  };
  const encodings = (eml: string) =>
    [...eml.matchAll(/^Content-Transfer-Encoding: (.+)$/gm)].map((m) => m[1]);

  it('encodes plain-ASCII parts quoted-printable, long lines wrapped', async () => {
    const eml = await written({
      html: `<p>${'A long newsletter line = more. '.repeat(10)}</p>`,
      text: `${'A long newsletter line = more. '.repeat(10)}`,
    });
    expect(encodings(eml)).toEqual(['quoted-printable', 'quoted-printable']);
    expect(eml).toContain('line =3D more');
    expect(eml.split('\n').every((line) => line.length <= 78)).toBe(true);
  });

  it('leaves other text to nodemailer’s choice (base64 for mostly non-Latin text)', async () => {
    const eml = await written({ subject: 'Новости', html: '<p>Привет, мир</p>', text: 'Привет, мир' });
    expect(encodings(eml)).toEqual(['base64', 'base64']);
  });
});

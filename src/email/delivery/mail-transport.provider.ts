import { Logger, type Provider } from '@nestjs/common';
import { join } from 'node:path';
import { Env } from '../../config/env';
import { OutboxTransport, SmtpTransport, type MailTransport } from './mail-transport';

export const MAIL_TRANSPORT = Symbol('MAIL_TRANSPORT');

/** Pooled SMTP when `SMTP_URL` is set, else `.eml` files in `DATA_DIR/outbox`. */
export const mailTransportProvider: Provider<MailTransport> = {
  provide: MAIL_TRANSPORT,
  inject: [Env],
  useFactory: (env: Env): MailTransport => {
    if (env.SMTP_URL) return new SmtpTransport(env.SMTP_URL, env.EMAIL_WORKER_CONCURRENCY);
    const outbox = join(env.DATA_DIR, 'outbox');
    new Logger('MailTransport').log(`SMTP_URL is not set: e-mails are written to ${outbox}`);
    return new OutboxTransport(outbox);
  },
};

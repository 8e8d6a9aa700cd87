import { Logger, type Provider } from '@nestjs/common';
import { join } from 'node:path';
import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../../config/env';
import { OutboxTransport, type MailTransport } from './mail-transport';
import { SmtpTransport } from './smtp-transport';

export const MAIL_TRANSPORT = Symbol('MAIL_TRANSPORT');

/** Pooled SMTP when `SMTP_URL` is set, else `.eml` files in `DATA_DIR/outbox`. */
export const mailTransportProvider: Provider<MailTransport> = {
  provide: MAIL_TRANSPORT,
  inject: [ConfigService],
  useFactory: (config: ConfigService<AppConfig, true>): MailTransport => {
    const smtpUrl = config.get('SMTP_URL', { infer: true });
    if (smtpUrl) {
      return new SmtpTransport(smtpUrl, config.get('EMAIL_WORKER_CONCURRENCY', { infer: true }), {
        sendTimeoutMs: config.get('SMTP_SEND_TIMEOUT_MS', { infer: true }),
      });
    }
    const outbox = join(config.get('DATA_DIR', { infer: true }), 'outbox');
    new Logger('MailTransport').log(`SMTP_URL is not set: e-mails are written to ${outbox}`);
    return new OutboxTransport(outbox);
  },
};

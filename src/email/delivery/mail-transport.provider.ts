import { Logger, type Provider } from '@nestjs/common';
import { join } from 'node:path';
import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../../config/env';
import type { EmailTransportName } from '../email.config';
import { EMAIL_KIND } from '../jobs/email-kind';
import { kindTokens, type KindRuntime } from '../../queue/kind-runtime';
import type { KindTypes } from '../../queue/queue-kind';
import { OutboxTransport, type MailTransport } from './mail-transport';
import { ResendApiTransport } from './resend-api-transport';
import { SmtpTransport } from './smtp-transport';

export const MAIL_TRANSPORT = Symbol('MAIL_TRANSPORT');

/** `EMAIL_TRANSPORT`, or without it what the settings imply: SMTP when `SMTP_URL` is set, else the outbox. */
export function chosenTransport(config: ConfigService<AppConfig, true>): EmailTransportName {
  return (
    config.get('EMAIL_TRANSPORT', { infer: true }) ??
    (config.get('SMTP_URL', { infer: true }) ? 'smtp' : 'outbox')
  );
}

/**
 * The transport `EMAIL_TRANSPORT` names (docs/operations/email-transports.md): pooled SMTP to `SMTP_URL`,
 * Resend's HTTP API, or `.eml` files in `DATA_DIR/outbox`. Connections: SMTP has a pool per stream, as
 * many as that stream's worker slots (the e-mail kind's lane settings, so the two always agree); the API
 * one keep-alive agent with as many sockets as both streams' slots.
 */
export const mailTransportProvider: Provider<MailTransport> = {
  provide: MAIL_TRANSPORT,
  inject: [ConfigService, kindTokens(EMAIL_KIND).runtime],
  useFactory: (config: ConfigService<AppConfig, true>, emailKind: KindRuntime<KindTypes>): MailTransport => {
    const pools = {
      transactional: emailKind.settings('transactional').concurrency,
      broadcast: emailKind.settings('broadcast').concurrency,
    };
    switch (chosenTransport(config)) {
      case 'smtp': {
        // The environment check requires SMTP_URL for this choice.
        return new SmtpTransport(config.get('SMTP_URL', { infer: true }), pools, {
          sendTimeoutMs: config.get('SMTP_SEND_TIMEOUT_MS', { infer: true }),
        });
      }
      case 'resend-api':
        return new ResendApiTransport({
          // The environment check requires the key for this choice.
          apiKey: config.get('RESEND_API_KEY', { infer: true }),
          baseUrl: config.get('RESEND_API_URL', { infer: true }),
          timeoutMs: config.get('RESEND_API_TIMEOUT_MS', { infer: true }),
          // Both streams' slots: a campaign's sends in flight never leave a sign-in link without a socket.
          maxConnections: pools.transactional + pools.broadcast,
        });
      case 'outbox': {
        const outbox = join(config.get('DATA_DIR', { infer: true }), 'outbox');
        new Logger('MailTransport').log(`No mail transport configured: e-mails are written to ${outbox}`);
        return new OutboxTransport(outbox);
      }
    }
  },
};

import {
  type BeforeApplicationShutdown,
  ForbiddenException,
  Injectable,
  Logger,
  UnauthorizedException,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectModel } from '@nestjs/mongoose';
import { type Model, trusted } from 'mongoose';
import { AppsService } from '../../apps/apps.service';
import type { App } from '../../apps/schemas/app.schema';
import type { EndUserPrincipal } from '../../common/auth/end-user.decorator';
import type { AppConfig } from '../../config/env';
import { ContactsService } from '../../contacts/contacts.service';
import { EmailService } from '../../email/email.service';
import { JobSecrets } from '../../email/jobs/job-secrets';
import { SuppressionService } from '../../email/suppression/suppression.service';
import { UndeliverableAddressException } from '../../email/suppression/undeliverable-address';
import { EndUserTokenService } from '../end-user/end-user-token.service';
import { MagicLinkAddressLimit } from './address-limit';
import { MAGIC_LINK_COMPOSER, MAGIC_LINK_SECRET, type MagicLinkJobVariables } from './magic-link-composer';
import { magicLinkPage } from './magic-link-mail';
import { MagicLinkTokens } from './magic-link-tokens';
import { MagicLinkToken } from './schemas/magic-link-token.schema';

/** How long a link signs in (docs/architecture.md "Magic link"). */
export const LINK_LIFETIME_MINUTES = 15;
/**
 * Queue priority of sign-in mail: above every other mail (campaigns run at 0), since the person is waiting
 * and the link dies in 15 minutes.
 */
export const MAGIC_LINK_PRIORITY = 100;

export const INVALID_LINK = 'This sign-in link is invalid, used or expired';
export const APP_INACTIVE = 'This app is inactive';

export interface MagicLinkSession {
  token: string;
  /** The verify response names the address (the person just proved it); the token itself does not. */
  user: EndUserPrincipal & { email: string };
}

/**
 * Passwordless sign-in of an app's end users (docs/architecture.md "Magic link"). `request` answers as soon
 * as the app is known to be active and does the rest (address limit, person record, token, e-mail) after the
 * response, so the answer and its timing are the same for a known address, an unknown one and one over its
 * limit. `verify` consumes a link once and returns an end-user token for the person and the app.
 */
@Injectable()
export class MagicLinkService implements BeforeApplicationShutdown {
  private readonly logger = new Logger(MagicLinkService.name);
  private readonly publicBaseUrl: string;
  /** Links being prepared after their response went out; shutdown waits for them. */
  private readonly pending = new Set<Promise<void>>();

  constructor(
    @InjectModel(MagicLinkToken.name) private readonly links: Model<MagicLinkToken>,
    private readonly apps: AppsService,
    private readonly contacts: ContactsService,
    private readonly email: EmailService,
    private readonly suppression: SuppressionService,
    private readonly jobSecrets: JobSecrets,
    private readonly tokens: MagicLinkTokens,
    private readonly addressLimit: MagicLinkAddressLimit,
    private readonly endUserTokens: EndUserTokenService,
    config: ConfigService<AppConfig, true>,
  ) {
    this.publicBaseUrl = config.get('publicBaseUrl', { infer: true });
  }

  /**
   * 404 for an unknown or inactive app; 422 for an address that hard-bounced (no mail can reach it, and the
   * answer must not say "on its way"); otherwise the link is sent after the response (see the class).
   */
  async request(email: string, appId: string): Promise<void> {
    const app = await this.apps.requireActiveApp(appId);
    if ((await this.suppression.blocks(email, 'transactional')) !== null) {
      throw new UndeliverableAddressException();
    }
    const task = this.sendLink(app, email)
      .catch((error: unknown) => {
        // The response has gone; the person asks again. Logged without the address.
        this.logger.error(
          `Magic link for app ${app.id} not sent: ${(error as Error).message}`,
          (error as Error).stack,
        );
      })
      .finally(() => this.pending.delete(task));
    this.pending.add(task);
  }

  /** Resolves once every link requested so far is in the e-mail queue (or has failed and been logged). */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.idle();
  }

  /**
   * Consumes the link: one conditional update finds it unused and unexpired and marks it used, so of two
   * verifies of one link exactly one succeeds. 401 for a link that is malformed, unknown, used or expired
   * (or whose person was erased since), 403 when its app has been switched off since it was sent.
   */
  async verify(token: string): Promise<MagicLinkSession> {
    const tokenHash = this.tokens.hashOf(token);
    if (!tokenHash) throw new UnauthorizedException(INVALID_LINK);
    const now = new Date();
    const link = await this.links
      .findOneAndUpdate(
        { tokenHash, usedAt: null, expiresAt: trusted({ $gt: now }) },
        { $set: { usedAt: now } },
        { returnDocument: 'after' },
      )
      .lean<MagicLinkToken>()
      .exec();
    if (!link) throw new UnauthorizedException(INVALID_LINK);
    const [app, contact] = await Promise.all([
      this.apps.findByAppId(link.appId),
      this.contacts.findById(String(link.contactId)),
    ]);
    if (!app || !contact || contact.deletedAt) throw new UnauthorizedException(INVALID_LINK);
    if (!app.active) throw new ForbiddenException(APP_INACTIVE);
    const user = { id: String(contact._id), email: contact.email, appId: app.id };
    return { token: await this.endUserTokens.sign(user, contact.tokenVersion ?? 0), user };
  }

  private async sendLink(app: App, email: string): Promise<void> {
    // Over the limit: nothing is sent and nothing tells the caller (see docs/decisions/auth-magic-link.md).
    if (!(await this.addressLimit.allow(app.id, email))) return;
    // Signing in is not consent to anything: a new person record starts with every consent unasked.
    const contact = await this.contacts.findOrCreate(email);
    const { token, tokenHash } = this.tokens.issue();
    const link = await this.links.create({
      tokenHash,
      contactId: contact._id,
      appId: app.id,
      expiresAt: new Date(Date.now() + LINK_LIFETIME_MINUTES * 60_000),
    });
    const variables: MagicLinkJobVariables = {
      page: magicLinkPage(app, this.publicBaseUrl).toString(),
      appName: app.name,
      language: contact.locale ?? 'en',
      expiresInMinutes: LINK_LIFETIME_MINUTES,
    };
    // The token travels sealed and the mail is composed when it is sent
    // (docs/decisions/security-secrets-in-jobs.md): the queue never holds a link that signs in.
    // Transactional: the worker checks suppression only.
    await this.email.enqueueEmail(
      {
        to: contact.email,
        appId: app.id,
        contactId: String(contact._id),
        composer: MAGIC_LINK_COMPOSER,
        variables: { ...variables },
        sealed: this.jobSecrets.seal({ [MAGIC_LINK_SECRET]: token }),
      },
      { idempotencyKey: `magic-link:${String(link._id)}`, priority: MAGIC_LINK_PRIORITY },
    );
  }
}

import { Injectable } from '@nestjs/common';
import { ComposerHandler, type ComposedContent } from '../../email/jobs/email-handlers';
import type { EmailMessage } from '../../email/jobs/email-message';
import { JobSecrets } from '../../email/jobs/job-secrets';
import { PermanentJobError } from '../../queue/retry-policy';
import { EmailTemplatesService } from '../../email/templates/email-templates.service';
import {
  defaultMagicLinkContent,
  MAGIC_LINK_TEMPLATE,
  magicLinkUrl,
  type MagicLinkVariables,
} from './magic-link-mail';

/** The `composer` kind of sign-in messages. */
export const MAGIC_LINK_COMPOSER = 'magic-link';

/** What a sign-in message is queued with in clear: nothing that signs anyone in. */
export interface MagicLinkJobVariables {
  /** The sign-in page (magicLinkPage) the token is added to when the message is sent. */
  page: string;
  appName: string;
  language: string;
  expiresInMinutes: number;
}

/** The name of the sealed secret (`JobSecrets`) that holds the link's token. */
export const MAGIC_LINK_SECRET = 'token';

function jobVariables(message: EmailMessage): MagicLinkJobVariables | null {
  const v = (message.variables ?? {}) as Partial<MagicLinkJobVariables>;
  const valid =
    typeof v.page === 'string' &&
    URL.canParse(v.page) &&
    typeof v.appName === 'string' &&
    typeof v.language === 'string' &&
    typeof v.expiresInMinutes === 'number';
  return valid ? (v as MagicLinkJobVariables) : null;
}

/**
 * Renders a sign-in mail when the worker sends it (the `magic-link` message composer): opens the sealed
 * token, builds the link, and words the mail with the app's (or the global) `magic-link` template when one
 * is active, else the built-in text. The job holds the token only sealed and never the rendered body
 * (docs/decisions/security-secrets-in-jobs.md); the clear link exists only in memory and in the
 * message handed to the transport.
 */
@Injectable()
export class MagicLinkComposer {
  constructor(
    private readonly secrets: JobSecrets,
    private readonly templates: EmailTemplatesService,
  ) {}

  /** Null (the job is dead at once) when the token cannot be opened or the variables are not ours. */
  @ComposerHandler(MAGIC_LINK_COMPOSER)
  async compose(message: EmailMessage): Promise<ComposedContent | null> {
    const token = this.secrets.open(message.sealed)?.[MAGIC_LINK_SECRET];
    const queued = jobVariables(message);
    if (!token || !queued) return null;
    const variables: MagicLinkVariables = {
      link: magicLinkUrl(new URL(queued.page), token),
      appName: queued.appName,
      email: message.to,
      expiresInMinutes: queued.expiresInMinutes,
    };
    const appId = message.appId ?? null;
    const template = await this.templates.resolveForSending(appId, MAGIC_LINK_TEMPLATE, queued.language);
    if (!template) return defaultMagicLinkContent(variables);
    try {
      return { ...(await this.templates.render(template, { ...variables })), sender: template.sender };
    } catch (error) {
      throw new PermanentJobError(
        `Template "${MAGIC_LINK_TEMPLATE}" failed to render: ${(error as Error).message}`,
      );
    }
  }
}

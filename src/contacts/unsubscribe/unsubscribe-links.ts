import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { randomBytes } from 'node:crypto';
import { LinkTokens } from '../../common/crypto/link-token';
import type { AppConfig } from '../../config/env';

/** Whom an unsubscribe token names: one person's subscription to one app. */
export interface UnsubscribeTarget {
  contactId: string;
  appId: string;
  /**
   * Only on the link a public signup answers with: the subscription that signup started (its `signupId`).
   * Such a link ends that subscription and nothing else; a link without it ends whatever subscription the
   * person has (the links of e-mails, which only the mailbox holder sees).
   */
  signupId?: string;
  /**
   * Only on the links of a campaign that names a topic: the one-click POST drops this topic, and the page
   * offers the person's other choices (docs/api/newsletters.md "Topics and the preference page").
   */
  topic?: string;
}

/** A fresh signup id: 96 random bits, never guessed and never repeated. */
export const newSignupId = () => randomBytes(12).toString('base64url');

/**
 * Unsubscribe links (docs/architecture.md "Unsubscribe"): tokens of purpose `unsubscribe` naming a person and
 * an app (and, for a signup's answer, the signup), without expiry, at `PUBLIC_BASE_URL/unsubscribe/{token}`
 * (the page, and the RFC 8058 one-click target). The links of e-mails are signed; the link a public signup
 * answers with is sealed, since whoever sent the signup must not learn whom it names (a person's id tells
 * when the record was created, so whether the address was known).
 */
@Injectable()
export class UnsubscribeLinks {
  private readonly baseUrl: string;

  constructor(
    private readonly tokens: LinkTokens,
    config: ConfigService<AppConfig, true>,
  ) {
    this.baseUrl = config.get('publicBaseUrl', { infer: true });
  }

  /** Fields: person, app, then the signup (or an empty field) and the topic when there is one. */
  token(target: UnsubscribeTarget): string {
    const fields = [target.contactId, target.appId];
    if (target.signupId !== undefined || target.topic !== undefined) fields.push(target.signupId ?? '');
    if (target.topic !== undefined) fields.push(target.topic);
    return this.tokens.sign('unsubscribe', fields);
  }

  /** `base`: the app's link domain (LinkDomains.baseUrlOf), PUBLIC_BASE_URL when absent. */
  url(target: UnsubscribeTarget, base = this.baseUrl): string {
    return `${base}/unsubscribe/${this.token(target)}`;
  }

  /**
   * The link of a public signup's answer: sealed, and of one length for every answer (an id, the app's id
   * and a signup id of fixed lengths), so answers differ only by their random bytes.
   */
  signupAnswerUrl(target: Required<Omit<UnsubscribeTarget, 'topic'>>): string {
    const token = this.tokens.seal('unsubscribe', [target.contactId, target.appId, target.signupId]);
    return `${this.baseUrl}/unsubscribe/${token}`;
  }

  /** The target of a genuine token, signed or sealed, or null. */
  read(token: string): UnsubscribeTarget | null {
    const fields = this.tokens.verify('unsubscribe', token) ?? this.tokens.open('unsubscribe', token);
    if (!fields || fields.length < 2 || fields.length > 4) return null;
    const [contactId, appId, signupId, topic] = fields;
    return {
      contactId,
      appId,
      ...(signupId ? { signupId } : {}),
      ...(topic ? { topic } : {}),
    };
  }
}

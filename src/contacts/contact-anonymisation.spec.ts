import { Types } from 'mongoose';
import { anonymised, erasedAddress, ERASED_TEXT } from './contact-anonymisation';
import type { ConsentEvent, Contact } from './schemas/contact.schema';

describe('anonymised', () => {
  const _id = new Types.ObjectId();
  const at = new Date('2026-01-02T03:04:05Z');
  const event = (overrides: Partial<ConsentEvent>): ConsentEvent => ({
    category: 'blog',
    status: true,
    reason: null,
    source: 'joinlist',
    appId: 'shop',
    actor: 'self',
    ip: '203.0.113.9',
    referralUrl: 'https://ref.test/x',
    at,
    ...overrides,
  });
  const contact: Contact = {
    _id,
    email: 'jo.ng@example.com',
    firstName: 'Jo',
    lastName: 'Ng-Émile',
    locale: 'fr',
    tags: ['vip'],
    consent: { outreach: null, commercial: false, blog: true },
    consentHistory: [
      event({}),
      event({
        category: 'commercial',
        status: false,
        actor: 'admin@corp.test',
        reason: 'Jo said no; JO.NG@example.com',
      }),
      event({ actor: 'Jo.Ng@Example.com', reason: 'Joined via joinlist; ng-émile asked' }),
    ],
    subscriptions: [
      {
        appId: 'shop',
        status: 'active',
        source: 'joinlist',
        referralUrl: 'https://ref.test/x',
        subscribedAt: at,
        unsubscribedAt: null,
      },
    ],
    deletedAt: null,
    revision: 3,
    tokenVersion: 0,
    createdAt: at,
    updatedAt: at,
  };
  const now = new Date('2026-05-06T07:08:09Z');
  const result = anonymised(contact, now);

  it('replaces the address by a placeholder made of the id alone and clears names, tags and locale', () => {
    expect(result).toMatchObject({
      email: `erased-${String(_id)}@erased.invalid`,
      firstName: null,
      lastName: null,
      locale: null,
      tags: [],
      deletedAt: now,
    });
    expect(erasedAddress(String(_id))).toBe(result.email);
  });

  it('keeps what each ledger entry decided, without IP, referral URL or the address as actor', () => {
    expect(result.consentHistory.map((e) => [e.category, e.status, e.source, e.appId, e.at])).toEqual(
      contact.consentHistory.map((e) => [e.category, e.status, e.source, e.appId, e.at]),
    );
    expect(result.consentHistory.every((e) => e.ip === null && e.referralUrl === null)).toBe(true);
    expect(result.consentHistory.map((e) => e.actor)).toEqual(['self', 'admin@corp.test', 'self']);
  });

  it('redacts the address and whole-word names in reasons, in any case', () => {
    expect(result.consentHistory.map((e) => e.reason)).toEqual([
      null,
      `${ERASED_TEXT} said no; ${ERASED_TEXT}`,
      // "Joined" contains "Jo" but is another word.
      `Joined via joinlist; ${ERASED_TEXT} asked`,
    ]);
  });

  it('keeps subscriptions without their referral URL', () => {
    expect(result.subscriptions).toEqual([{ ...contact.subscriptions[0], referralUrl: null }]);
  });
});

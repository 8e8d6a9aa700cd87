import { getModelToken } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import { EmailEvent } from '../src/email/tracking/schemas/email-event.schema';
import { TrackingEvents } from '../src/email/tracking/tracking-events';
import {
  DEFAULT_TRACKING_LIMITS,
  TRACKING_LIMITS,
  type TrackingLimits,
} from '../src/email/tracking/tracking-limits';
import { TrackingLinks } from '../src/email/tracking/tracking-links';
import { Campaign } from '../src/newsletter/campaigns/schemas/campaign.schema';
import { createTestApp, resetDatabase, type TestApp } from './helpers/app';
import { seedApp } from './helpers/factories';
import { createSessions, type Session } from './helpers/session';

const HUMAN = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36';
const PROXY = 'Mozilla/5.0';

/**
 * Limits with a short replay window: each open after a pause of SHORT_WINDOW_MS opens a window of its own.
 */
const SHORT_WINDOW_MS = 25;
const SHORT_WINDOW: TrackingLimits = { ...DEFAULT_TRACKING_LIMITS, replayWindowMs: SHORT_WINDOW_MS };
const pause = () => new Promise((resolve) => setTimeout(resolve, SHORT_WINDOW_MS + 5));

const pathOf = (url: string) => new URL(url).pathname;

describe('Tracking: replays, HEAD, stored links and token spellings', () => {
  let t: TestApp;
  let events: Model<EmailEvent>;
  let campaigns: Model<Campaign>;
  let admin: Session;
  let viewer: Session;
  let appId: string;

  beforeAll(async () => {
    t = await createTestApp();
    events = t.app.get<Model<EmailEvent>>(getModelToken(EmailEvent.name));
    campaigns = t.app.get<Model<Campaign>>(getModelToken(Campaign.name));
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.app.get(TrackingEvents).flush();
    await resetDatabase(t.connection);
    ({ admin, viewer } = await createSessions(t));
    appId = (await seedApp(t)).id;
  });

  const flush = () => t.app.get(TrackingEvents).flush();
  const links = () => t.app.get(TrackingLinks);

  /** Creates a campaign with this HTML and sends it (which fixes its link table); returns its id. */
  async function sentCampaign(htmlContent: string): Promise<string> {
    const base = `/admin/${appId}/newsletter/campaigns`;
    const created = await admin.http.post(base, { name: 'Replays', subject: 'News', htmlContent });
    expect(created.status).toBe(201);
    const id = created.body.data._id as string;
    expect((await admin.http.post(`${base}/${id}/send`)).status).toBe(200);
    return id;
  }

  const target = (campaignId: string, contactId = String(new Types.ObjectId())) => ({
    campaignId,
    contactId,
    appId,
  });
  const open = (app: TestApp, campaignId: string, contactId: string, agent = HUMAN) =>
    app.http.get(pathOf(app.app.get(TrackingLinks).openUrl(target(campaignId, contactId))), {
      headers: { 'user-agent': agent },
    });
  const analyticsOf = async (campaignId: string) =>
    (await viewer.http.get(`/admin/email-events/analytics/campaigns/${campaignId}`)).body.data;
  const trackedMessage = (campaignId: string, contactId: string) =>
    t.connection
      .collection('email_tracked_messages')
      .findOne({ _id: `campaign:${campaignId}:${contactId}` as unknown as Types.ObjectId });

  describe('replays', () => {
    it('records 500 replays of one pixel as one opened event', async () => {
      const campaignId = await sentCampaign('<p>Hello</p>');
      const contactId = String(new Types.ObjectId());
      for (let i = 0; i < 500; i++) expect((await open(t, campaignId, contactId)).status).toBe(200);
      await flush();
      expect(await events.countDocuments({ type: 'opened' })).toBe(1);
      expect(await analyticsOf(campaignId)).toMatchObject({ opened: 1, uniqueOpens: 1 });
    });

    it('records replayed clicks of one link as one clicked event, each link apart', async () => {
      const campaignId = await sentCampaign(
        '<a href="https://shop.test/a">a</a> <a href="https://shop.test/b">b</a>',
      );
      const who = target(campaignId);
      for (let i = 0; i < 100; i++) {
        const res = await t.http.get(pathOf(links().clickUrl({ ...who, linkIndex: 0 })), {
          headers: { 'user-agent': HUMAN },
        });
        expect(res.status).toBe(302);
      }
      await t.http.get(pathOf(links().clickUrl({ ...who, linkIndex: 1 })), {
        headers: { 'user-agent': HUMAN },
      });
      await flush();
      const clicks = await events
        .find({ type: 'clicked' })
        .sort({ linkIndex: 1 })
        .lean<EmailEvent[]>()
        .exec();
      expect(clicks.map((click) => click.linkIndex)).toEqual([0, 1]);
      expect(await analyticsOf(campaignId)).toMatchObject({ clicked: 2, uniqueClicks: 1 });
    });

    it('records a click of a message that so far had only opens (each type has its own cap)', async () => {
      const campaignId = await sentCampaign('<a href="https://shop.test/a">a</a>');
      const contactId = String(new Types.ObjectId());
      const who = target(campaignId, contactId);
      await open(t, campaignId, contactId, PROXY);
      await flush();
      await t.http.get(pathOf(links().clickUrl({ ...who, linkIndex: 0 })), {
        headers: { 'user-agent': PROXY },
      });
      await flush();
      expect(await events.countDocuments({ type: 'opened' })).toBe(1);
      expect(await events.countDocuments({ type: 'clicked' })).toBe(1);
      expect(await trackedMessage(campaignId, contactId)).toMatchObject({ opened: 1, clicked: 1 });
    });
  });

  describe('HEAD', () => {
    it('answers HEAD /c and HEAD /o without recording anything', async () => {
      const campaignId = await sentCampaign('<a href="https://shop.test/a">a</a>');
      const who = target(campaignId);
      const click = await t.http.request('HEAD', pathOf(links().clickUrl({ ...who, linkIndex: 0 })), {
        headers: { 'user-agent': HUMAN },
      });
      expect(click.status).toBe(302);
      expect(click.headers.location).toBe('https://shop.test/a');
      const pixel = await t.http.request('HEAD', pathOf(links().openUrl(who)), {
        headers: { 'user-agent': HUMAN },
      });
      expect(pixel.status).toBe(200);
      await flush();
      expect(await events.countDocuments({ type: 'clicked' })).toBe(0);
      expect(await events.countDocuments({ type: 'opened' })).toBe(0);
    });
  });

  describe('stored links', () => {
    const ODD = [
      { written: 'https://例え.jp/', stored: 'https://xn--r8jz45g.jp/' },
      { written: 'https://shop.test/€uro', stored: 'https://shop.test/%E2%82%ACuro' },
      { written: 'https://shop.test/a b?q=x y', stored: 'https://shop.test/a%20b?q=x%20y' },
      { written: 'https://shop.test/café', stored: 'https://shop.test/caf%C3%A9' },
      { written: 'https://shop.test/new\nline', stored: 'https://shop.test/newline' },
    ];

    it('stores odd links normalised and redirects to them with an encoded Location', async () => {
      const html = ODD.map(({ written }, i) => `<a href="${written}">${i}</a>`).join(' ');
      const campaignId = await sentCampaign(html);
      const stored = await campaigns.findById(campaignId).lean<Campaign>().orFail().exec();
      expect(stored.links).toEqual(ODD.map(({ stored }) => stored));
      const who = target(campaignId);
      for (const [linkIndex, { stored }] of ODD.entries()) {
        const res = await t.http.get(pathOf(links().clickUrl({ ...who, linkIndex })), {
          headers: { 'user-agent': HUMAN },
        });
        expect(res.status).toBe(302);
        expect(res.headers.location).toBe(stored);
      }
    });

    it('leaves a link that cannot be normalised untracked', async () => {
      const campaignId = await sentCampaign(
        '<a href="https://exa mple.test/">bad</a> <a href="https://shop.test/ok">ok</a>',
      );
      const stored = await campaigns.findById(campaignId).lean<Campaign>().orFail().exec();
      expect(stored.links).toEqual(['https://shop.test/ok']);
    });

    it('redirects old, unnormalised links, and answers the envelope for one that cannot be a header', async () => {
      const campaign = await campaigns.create({
        appId,
        name: 'Old',
        subject: 'Old',
        htmlContent: '<p>old</p>',
        status: 'sent',
        links: ['https://例え.jp/', 'https://shop.test/x\ny', 'https://exa mple.test/\u2028'],
      });
      const who = target(String(campaign._id));
      const click = (linkIndex: number) =>
        t.http.get(pathOf(links().clickUrl({ ...who, linkIndex })), { headers: { 'user-agent': HUMAN } });
      expect((await click(0)).headers.location).toBe('https://xn--r8jz45g.jp/');
      expect((await click(1)).headers.location).toBe('https://shop.test/xy');
      const bad = await click(2);
      expect(bad.status).toBe(404);
      expect(bad.body).toEqual({ success: false, error: expect.any(String) });
    });
  });

  describe('token spellings', () => {
    it('accepts exactly one spelling of a click token', async () => {
      const campaignId = await sentCampaign('<a href="https://shop.test/a">a</a>');
      const token = pathOf(links().clickUrl({ ...target(campaignId), linkIndex: 0 })).slice('/c/'.length);
      const [payload, mac] = token.split('.');
      // A 16-byte MAC is 22 characters whose last one carries 4 unused bits: 16 characters decode alike.
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const last = alphabet.indexOf(mac[mac.length - 1]);
      const sameBytes = [...alphabet].filter((_, i) => i >> 4 === last >> 4);
      expect(sameBytes).toHaveLength(16);
      const spellings = [
        ...sameBytes.map((char) => `${payload}.${mac.slice(0, -1)}${char}`),
        `${token}=`,
        `${token}==`,
        `${token}!!`,
        `${token}%20`,
      ];
      const accepted: string[] = [];
      for (const spelling of spellings) {
        const res = await t.http.get(`/c/${spelling}`, { headers: { 'user-agent': HUMAN } });
        if (res.status === 302) accepted.push(spelling);
        else expect(res.status).toBe(404);
      }
      expect(accepted).toEqual([token]);
    });
  });

  // Last: closing an application also closes the connection this file's application shares.
  describe('per-message cap (short replay window; two instances)', () => {
    let a: TestApp;
    let b: TestApp;
    beforeAll(async () => {
      a = await createTestApp({ overrides: [{ provide: TRACKING_LIMITS, useValue: SHORT_WINDOW }] });
      b = await createTestApp({ overrides: [{ provide: TRACKING_LIMITS, useValue: SHORT_WINDOW }] });
    });
    afterAll(async () => {
      await a.close();
      await b.close();
    });
    const flushAll = () => Promise.all([a, b].map((app) => app.app.get(TrackingEvents).flush()));

    it('records at most 50 opens of one message, in distinct windows; later ones bump its counter', async () => {
      const campaignId = await sentCampaign('<p>Hello</p>');
      const contactId = String(new Types.ObjectId());
      for (let i = 0; i < 60; i++) {
        await open(a, campaignId, contactId);
        await pause();
        // Some flushes in between: the cap holds across batches, not only within one.
        if (i % 7 === 0) await flushAll();
      }
      await flushAll();
      expect(await events.countDocuments({ type: 'opened' })).toBe(50);
      expect(await trackedMessage(campaignId, contactId)).toMatchObject({ opened: 50, openedOverCap: 10 });
      expect(await analyticsOf(campaignId)).toMatchObject({ opened: 50, uniqueOpens: 1 });
    });

    it("still records a person's first human open after 50 automated ones (unique opens stay right)", async () => {
      const campaignId = await sentCampaign('<p>Hello</p>');
      const contactId = String(new Types.ObjectId());
      for (let i = 0; i < 50; i++) {
        await open(a, campaignId, contactId, PROXY);
        await pause();
      }
      await flushAll();
      await open(a, campaignId, contactId, HUMAN);
      await pause();
      await open(a, campaignId, contactId, HUMAN);
      await flushAll();
      expect(await events.countDocuments({ type: 'opened', automated: true })).toBe(50);
      expect(await events.countDocuments({ type: 'opened', automated: false })).toBe(1);
      expect(await analyticsOf(campaignId)).toMatchObject({ opened: 1, uniqueOpens: 1, automatedOpens: 50 });
      expect(await trackedMessage(campaignId, contactId)).toMatchObject({ openedOverCap: 1 });
    });

    it('holds the cap across instances: two processes, 40 opens each, 50 events', async () => {
      const campaignId = await sentCampaign('<p>Hello</p>');
      const contactId = String(new Types.ObjectId());
      for (let i = 0; i < 40; i++) {
        await Promise.all([open(a, campaignId, contactId), open(b, campaignId, contactId)]);
        await pause();
      }
      await flushAll();
      expect(await events.countDocuments({ type: 'opened' })).toBe(50);
      expect(await trackedMessage(campaignId, contactId)).toMatchObject({ opened: 50, openedOverCap: 30 });
    });
  });
});

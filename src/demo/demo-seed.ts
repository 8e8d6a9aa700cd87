import type { INestApplicationContext } from '@nestjs/common';
import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { randomBytes } from 'node:crypto';
import { ApiKey } from '../api-keys/schemas/api-key.schema';
import { ApiKeysService } from '../api-keys/api-keys.service';
import { AppsService } from '../apps/apps.service';
import { Role } from '../common/auth/roles';
import { ContactsService } from '../contacts/contacts.service';
import { Feedback } from '../feedback/schemas/feedback.schema';
import { FeedbackService } from '../feedback/feedback.service';
import { SubscribersService } from '../newsletter/subscribers.service';
import { Ticket } from '../tickets/schemas/ticket.schema';
import { TicketsService } from '../tickets/tickets.service';
import { User } from '../users/schemas/user.schema';
import { UsersService } from '../users/users.service';
import { Want } from '../wants/schemas/want.schema';
import { WantVote } from '../wants/schemas/want-vote.schema';
import { WantsService } from '../wants/wants.service';
import { type DemoCampaignReport, seedDemoCampaign } from './demo-campaign';
import {
  addedByAdmin,
  DEMO_APPS,
  DEMO_FEEDBACK,
  DEMO_KEY_NAME,
  DEMO_WANTS,
  type DemoApp,
  demoPerson,
  demoTicket,
  firstPersonOf,
  hasUnsubscribed,
} from './demo-content';

export const DEMO_ADMIN_EMAIL = 'demo-admin@example.com';
/** A documentation address range (RFC 5737): the signups' recorded IP is plainly not a real one. */
const DEMO_IP = '203.0.113.10';

export interface DemoAppReport {
  appId: string;
  publicKey: string;
  keyId: string;
  /** The API key's value, or why it cannot be shown. */
  apiKey: string;
}

export interface DemoReport {
  admin: { email: string; id: string; password?: string };
  apps: DemoAppReport[];
  campaign: DemoCampaignReport;
  /** What this run added; a repeated run on a complete demo adds nothing. */
  added: { subscribers: number; tickets: number; wants: number; votes: number; feedback: number };
}

const modelOf = <T>(app: INestApplicationContext, name: string) => app.get<Model<T>>(getModelToken(name));

/**
 * The back-office user the demo records as its author: the first active admin, or a demo admin with a
 * random password (shown once: only its hash is stored) when the database has none yet.
 */
async function demoAdmin(app: INestApplicationContext): Promise<DemoReport['admin']> {
  const users = modelOf<User>(app, User.name);
  const existing = await users.findOne({ role: Role.Admin, isActive: true }).sort({ createdAt: 1 }).lean();
  if (existing) return { email: existing.email, id: String(existing._id) };
  const password = randomBytes(12).toString('base64url');
  await app.get(UsersService).ensureAdmin(DEMO_ADMIN_EMAIL, password);
  const created = await users.findOne({ email: DEMO_ADMIN_EMAIL }).lean().orFail();
  return { email: created.email, id: String(created._id), password };
}

async function demoAppWithKey(
  app: INestApplicationContext,
  demo: DemoApp,
  adminId: string,
): Promise<DemoAppReport> {
  const apps = app.get(AppsService);
  const record =
    (await apps.findByAppId(demo.id)) ??
    (await apps.create({ id: demo.id, name: demo.name, description: demo.description }));
  const keys = app.get(ApiKeysService);
  const existing = await modelOf<ApiKey>(app, ApiKey.name)
    .findOne({ appId: demo.id, name: DEMO_KEY_NAME })
    .lean();
  let keyId: string;
  let apiKey: string;
  if (existing) {
    keyId = String(existing._id);
    apiKey = await keys.getWithValue(keyId).then(
      ({ value }) => value,
      (error: Error) => `(not readable: ${error.message})`,
    );
  } else {
    const created = await keys.create(
      { appId: demo.id, name: DEMO_KEY_NAME, description: 'Created by npm run seed:demo' },
      adminId,
    );
    keyId = String(created.key._id);
    apiKey = created.value;
  }
  return { appId: demo.id, publicKey: record.publicKey, keyId, apiKey };
}

/**
 * The app's newsletter audience, through the same calls as the routes: most sign up through the app's
 * backend (consent `blog` and a ledger event), every tenth is added by an admin, a few leave again by
 * their unsubscribe link. A person with any subscription to the app (even an ended one) is left as is.
 */
async function demoSubscribers(app: INestApplicationContext, demo: DemoApp, appIndex: number) {
  const contacts = app.get(ContactsService);
  const subscribers = app.get(SubscribersService);
  let added = 0;
  for (let i = 0; i < demo.subscribers; i++) {
    const n = firstPersonOf(appIndex) + i;
    const person = demoPerson(n);
    const current = await contacts.findByEmail(person.email);
    if (current?.subscriptions.some((subscription) => subscription.appId === demo.id)) continue;
    if (addedByAdmin(n)) await subscribers.create(demo.id, person);
    else await subscribers.subscribe(demo.id, person, DEMO_IP);
    if (hasUnsubscribed(n)) {
      const contact = await contacts.findByEmail(person.email);
      await contacts.unsubscribe(String(contact!._id), demo.id, { source: 'unsubscribe', actor: 'self' });
    }
    added++;
  }
  return added;
}

/**
 * Tickets created by the service, then dated back into the last 30 days and moved along their status as
 * staff would have (`resolvedAt` then). The dates are written on the collection directly: the model
 * treats `createdAt` as fixed, which is right for every request and wrong only for a demo's history.
 */
async function demoTickets(app: INestApplicationContext, demo: DemoApp, now: number) {
  const tickets = app.get(TicketsService);
  const collection = modelOf<Ticket>(app, Ticket.name);
  let added = 0;
  for (let n = 0; n < demo.tickets; n++) {
    const ticket = demoTicket(n);
    if (await collection.exists({ appId: demo.id, subject: ticket.subject })) continue;
    const { subject, message, topic, priority, email } = ticket;
    const created = await tickets.create(demo.id, {
      dto: { subject, message, topic, priority, email },
      files: [],
    });
    if (ticket.status !== 'pending') await tickets.update(demo.id, String(created._id), ticket);
    const createdAt = new Date(now - ticket.ageMs);
    const resolvedAt =
      ticket.resolvedAfterMs === undefined
        ? {}
        : { resolvedAt: new Date(createdAt.getTime() + ticket.resolvedAfterMs) };
    await collection.collection.updateOne(
      { _id: created._id },
      { $set: { createdAt, updatedAt: new Date(now - ticket.ageMs / 2), ...resolvedAt } },
    );
    added++;
  }
  return added;
}

/** The wish list with votes from distinct voters, cast as the public vote route casts them. */
async function demoWants(app: INestApplicationContext, demo: DemoApp) {
  const wants = app.get(WantsService);
  const collection = modelOf<Want>(app, Want.name);
  const votes = modelOf<WantVote>(app, WantVote.name);
  const added = { wants: 0, votes: 0 };
  for (const [index, demoWant] of DEMO_WANTS.entries()) {
    const { title, description, category } = demoWant;
    let want = await collection.findOne({ appId: demo.id, title }).lean<Want>();
    if (!want) {
      want = await wants.create(demo.id, { title, description, category });
      if (index === 0) await wants.setStatus(demo.id, String(want._id), 'planned');
      if (index === DEMO_WANTS.length - 1) await wants.setStatus(demo.id, String(want._id), 'completed');
      added.wants++;
    }
    for (let v = 0; v < demoWant.votes; v++) {
      const voterId = `demo-voter-${v}`;
      if (await votes.exists({ wantId: want._id, voterId })) continue;
      await wants.toggleVote(demo.id, String(want._id), voterId);
      added.votes++;
    }
  }
  return added;
}

async function demoFeedback(app: INestApplicationContext, demo: DemoApp, appIndex: number) {
  const feedback = app.get(FeedbackService);
  const collection = modelOf<Feedback>(app, Feedback.name);
  let added = 0;
  for (const [i, item] of DEMO_FEEDBACK.entries()) {
    if (await collection.exists({ appId: demo.id, subject: item.subject })) continue;
    await feedback.submit(demo.id, { ...item, email: demoPerson(firstPersonOf(appIndex) + i * 5).email });
    added++;
  }
  return added;
}

/**
 * Fills the database with the demo (docs/demo-data.md), through the services the routes use. Every step
 * first looks for what it would create, so running it again adds only what is missing.
 */
export async function seedDemo(app: INestApplicationContext): Promise<DemoReport> {
  const now = Date.now();
  const admin = await demoAdmin(app);
  const added = { subscribers: 0, tickets: 0, wants: 0, votes: 0, feedback: 0 };
  const apps: DemoAppReport[] = [];
  for (const [index, demo] of DEMO_APPS.entries()) {
    apps.push(await demoAppWithKey(app, demo, admin.id));
    added.subscribers += await demoSubscribers(app, demo, index);
    added.tickets += await demoTickets(app, demo, now);
    const wants = await demoWants(app, demo);
    added.wants += wants.wants;
    added.votes += wants.votes;
    added.feedback += await demoFeedback(app, demo, index);
  }
  const campaign = await seedDemoCampaign(app, DEMO_APPS[0].id, admin.id);
  return { admin, apps, campaign, added };
}

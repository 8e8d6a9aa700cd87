import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { INVALID_BEARER_TOKEN } from '../src/common/auth/credential.guard';
import { Role } from '../src/common/auth/roles';
import { duplicateRecordMessage } from '../src/common/http/all-exceptions.filter';
import { TOO_MANY_REQUESTS_MESSAGE } from '../src/common/http/rate-limit';
import { APP_CHANGED_CONCURRENTLY } from '../src/apps/apps.service';
import { duplicateRuleMessage } from '../src/chat/chat-rules.service';
import { CONTACT_BUSY } from '../src/contacts/contacts.service';
import { SENDING_TO_PERSON } from '../src/email/jobs/recipient-jobs.service';
import { DUPLICATE_TEMPLATE } from '../src/email/templates/email-templates.service';
import { NOT_HELD } from '../src/newsletter/campaigns/campaign-holds.listener';
import {
  ALREADY_SENT,
  NOT_A_DRAFT,
  NOT_A_DRAFT_TEST,
  NOT_SCHEDULED,
  SCHEDULED,
} from '../src/newsletter/campaigns/campaigns.service';
import { SEGMENT_IN_USE } from '../src/newsletter/segments/segments.service';
import { NOTHING_TO_ENABLE } from '../src/auth/two-factor/two-factor.service';
import { ALREADY_SUBSCRIBED } from '../src/newsletter/subscribers.service';
import { THREAD_FULL } from '../src/tickets/tickets.service';
import { LAST_ADMIN_MESSAGE } from '../src/users/users.service';
import { FOREIGN_SECRET_ERROR } from '../src/api-keys/api-keys.service';
import { createTestApp, resetDatabase, TestApp } from './helpers/app';
import { seedApp } from './helpers/factories';
import { createSession, Session } from './helpers/session';

interface Schema {
  $ref?: string;
  type?: string;
  oneOf?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
}
interface Operation {
  operationId: string;
  parameters?: { name: string; in: string; schema?: Schema }[];
  requestBody?: { content: Record<string, { schema?: Schema }> };
  responses: Record<string, { content?: Record<string, { example?: { error?: string } }> }>;
}
interface Document {
  info: { license?: { name?: string; url?: string } };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

/**
 * The message each route's code sends with its 409, from the constants the code throws: the document must
 * show exactly these (docs/api/generated-clients.md "Errors"). A new 409 route has to be added here.
 */
const CONFLICTS: Record<string, string> = {
  createUser: duplicateRecordMessage(['email']),
  updateUser: LAST_ADMIN_MESSAGE,
  deactivateUser: LAST_ADMIN_MESSAGE,
  createApp: duplicateRecordMessage(['id']),
  toggleApp: APP_CHANGED_CONCURRENTLY,
  getApiKey: FOREIGN_SECRET_ERROR,
  createChatRoutingRule: duplicateRuleMessage('my-shop', 'tickets'),
  deleteContact: SENDING_TO_PERSON,
  setContactConsent: CONTACT_BUSY,
  optOutContact: CONTACT_BUSY,
  createTemplate: DUPLICATE_TEMPLATE,
  replaceTemplate: DUPLICATE_TEMPLATE,
  updateTemplate: DUPLICATE_TEMPLATE,
  duplicateTemplate: DUPLICATE_TEMPLATE,
  addTicketMessage: THREAD_FULL,
  createSubscriber: ALREADY_SUBSCRIBED,
  updateCampaign: NOT_A_DRAFT,
  deleteCampaign: NOT_A_DRAFT,
  sendCampaign: ALREADY_SENT,
  testCampaign: NOT_A_DRAFT_TEST,
  resumeCampaign: NOT_HELD,
  scheduleCampaign: SCHEDULED,
  unscheduleCampaign: NOT_SCHEDULED,
  deleteSegment: SEGMENT_IN_USE,
  enableTwoFactor: NOTHING_TO_ENABLE,
  createSenderDomain: duplicateRecordMessage(['domain']),
};

describe('The OpenAPI document as client generators read it (/docs-json)', () => {
  let t: TestApp;
  let doc: Document;
  let admin: Session;
  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({
        name: `${method.toUpperCase()} ${path}`,
        operation,
      })),
    );
  const byId = (operationId: string) => {
    const found = operations().find(({ operation }) => operation.operationId === operationId);
    if (!found) throw new Error(`no operation ${operationId}`);
    return found.operation;
  };
  const exampleOf = (operation: Operation, status: number) =>
    operation.responses[status]?.content?.['application/json']?.example?.error;

  beforeAll(async () => {
    t = await createTestApp();
    doc = (await t.http.get('/docs-json')).body as Document;
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await resetDatabase(t.connection);
    admin = await createSession(t, Role.Admin);
  });

  it("carries the project's license", () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as {
      license: string;
    };
    expect(doc.info.license?.name).toBe(pkg.license);
  });

  it('types every parameter', () => {
    const untyped = operations().flatMap(({ name, operation }) =>
      (operation.parameters ?? [])
        .filter((parameter) => !parameter.schema?.type && !parameter.schema?.$ref)
        .map((parameter) => `${name} ${parameter.in} ${parameter.name}`),
    );
    expect(untyped).toEqual([]);
  });

  it('names every composed request body: no inline oneOf, anyOf or allOf', () => {
    const inline = (schema: Schema | undefined): boolean => {
      if (!schema || schema.$ref) return false;
      if (schema.oneOf) return true;
      const nested = [
        ...Object.values(schema.properties ?? {}),
        ...(schema.items ? [schema.items] : []),
        ...(typeof schema.additionalProperties === 'object' ? [schema.additionalProperties] : []),
      ];
      return nested.some(inline);
    };
    const found = operations().flatMap(({ name, operation }) =>
      Object.entries(operation.requestBody?.content ?? {})
        .filter(([, media]) => inline(media.schema))
        .map(([type]) => `${name} ${type}`),
    );
    expect(found).toEqual([]);
    expect(doc.components.schemas.PrimaryProviderEventBody.oneOf).toEqual([
      { $ref: '#/components/schemas/ProviderEvent' },
      { $ref: '#/components/schemas/ProviderEventBatch' },
    ]);
  });

  it('declares every field an app answer carries (`_id` included)', async () => {
    const created = await admin.http.post('/admin/apps', { id: 'contract-app', name: 'Contract' });
    expect(created.status).toBe(201);
    const declared = Object.keys(doc.components.schemas.AppView.properties ?? {});
    expect(Object.keys(created.body.data).filter((key) => !declared.includes(key))).toEqual([]);
    expect(declared).toContain('_id');
    const listed = await admin.http.get('/admin/apps');
    for (const app of listed.body.data as Record<string, unknown>[])
      expect(Object.keys(app).filter((key) => !declared.includes(key))).toEqual([]);
  });

  it("shows on every 409 the message that route's code sends", () => {
    const documented = Object.fromEntries(
      operations()
        .filter(({ operation }) => operation.responses['409'])
        .map(({ operation }) => [operation.operationId, exampleOf(operation, 409)]),
    );
    expect(documented).toEqual(CONFLICTS);
  });

  it('answers the documented 409 on a sample of routes', async () => {
    const app = await seedApp(t, { id: 'my-shop' });
    const again = await admin.http.post('/admin/apps', { id: app.id, name: 'Again' });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ success: false, error: exampleOf(byId('createApp'), 409) });

    const user = {
      email: 'ada@example.com',
      password: 'correct-horse-battery',
      firstName: 'Ada',
      lastName: 'L',
    };
    expect((await admin.http.post('/users', user)).body).toMatchObject({ success: true });
    const sameUser = await admin.http.post('/users', user);
    expect(sameUser.body).toEqual({ success: false, error: exampleOf(byId('createUser'), 409) });

    const lastAdmin = await admin.http.delete(`/users/${admin.user.id}`);
    expect(lastAdmin.status).toBe(409);
    expect(lastAdmin.body.error).toBe(exampleOf(byId('deactivateUser'), 409));

    const template = {
      appId: app.id,
      name: 'welcome',
      subject: 'Hi',
      htmlTemplate: '<p>Hi</p>',
      textTemplate: 'Hi',
    };
    const created = await admin.http.post('/admin/templates', template);
    expect(created.body).toMatchObject({ success: true });
    const sameTemplate = await admin.http.post('/admin/templates', template);
    expect(sameTemplate.status).toBe(409);
    expect(sameTemplate.body.error).toBe(exampleOf(byId('createTemplate'), 409));

    const subscribers = `/admin/${app.id}/newsletter/subscribers`;
    const first = await admin.http.post(subscribers, { email: 'ada@example.com' });
    expect(first.body).toMatchObject({ success: true });
    const subscribed = await admin.http.post(subscribers, { email: 'ada@example.com' });
    expect(subscribed.status).toBe(409);
    expect(subscribed.body.error).toBe(exampleOf(byId('createSubscriber'), 409));
  });

  it("shows on each body route the 400 its DTO answers to an empty body, not another route's", async () => {
    const createApp = await admin.http.post('/admin/apps', {});
    expect(createApp.status).toBe(400);
    expect(createApp.body.error).toBe(exampleOf(byId('createApp'), 400));
    const createUser = await admin.http.post('/users', {});
    expect(createUser.body.error).toBe(exampleOf(byId('createUser'), 400));
    await seedApp(t, { id: 'my-shop' });
    const update = await admin.http.patch('/admin/apps/my-shop', {});
    expect(update.status).toBe(400);
    expect(update.body.error).toBe(exampleOf(byId('updateApp'), 400));
    expect(exampleOf(byId('createApp'), 400)).not.toBe(exampleOf(byId('createUser'), 400));
  });

  it('shows the 429 the request budget really sends', () => {
    expect(exampleOf(byId('listUsers'), 429)).toBe(TOO_MANY_REQUESTS_MESSAGE);
  });

  it('answers a bearer header without a JWT with a precise 401, in the envelope', async () => {
    const garbage = await t.http.get('/users', { headers: { authorization: 'Bearer garbage' } });
    expect(garbage.status).toBe(401);
    expect(garbage.body).toEqual({ success: false, error: INVALID_BEARER_TOKEN });
    const basic = await t.http.get('/users', { headers: { authorization: 'Basic YTpi' } });
    expect(basic.body).toEqual({ success: false, error: INVALID_BEARER_TOKEN });
    const none = await t.http.get('/users');
    expect(none.body).toEqual({ success: false, error: 'Missing bearer token' });
  });
});

import { DiscoveryModule } from '@nestjs/core';
import { EndUserTokenService } from '../src/auth/end-user/end-user-token.service';
import { Role } from '../src/common/auth/roles';
import { ContactsService } from '../src/contacts/contacts.service';
import { createTestApp, TestApp } from './helpers/app';
import { GuardsProbeModule } from './helpers/guards-probe.module';
import { seedApiKey, seedApp } from './helpers/factories';
import { routeTable } from './helpers/route-table';
import { createSession, Session } from './helpers/session';

/** The parts of the document these tests read. */
interface Schema {
  $ref?: string;
  default?: unknown;
  description?: string;
  pattern?: string;
  required?: string[];
  properties?: Record<string, Schema>;
  items?: Schema;
}
interface Operation {
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; schema?: Schema }[];
  requestBody?: { content: Record<string, { schema?: Schema }> };
  responses: Record<string, { description: string }>;
}
interface Document {
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, Schema>;
    securitySchemes: Record<string, { type: string; scheme?: string; in?: string; name?: string }>;
  };
}

const UNKNOWN_ID = '0123456789abcdef01234567';

/**
 * What clients generated from /docs-json (openapi-typescript, openapi-generator) tripped over,
 * in the document and in the server's behaviour behind it. The generated-client gate itself is
 * test/generated-client.e2e-spec.ts.
 */
describe('The document as generated clients read it', () => {
  let t: TestApp;
  let doc: Document;
  let admin: Session;
  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({ method, path, operation })),
    );
  const schemaOf = (schema: Schema | undefined) =>
    doc.components.schemas[schema?.$ref?.split('/').pop() ?? ''];

  beforeAll(async () => {
    t = await createTestApp({ imports: [DiscoveryModule, GuardsProbeModule] });
    doc = (await t.http.get('/docs-json')).body as Document;
    admin = await createSession(t, Role.Admin);
  });
  afterAll(() => t.close());

  describe('PATCH carries no default', () => {
    it('has no `default` in any schema a PATCH body reaches, and its fields are optional', () => {
      const withDefault: string[] = [];
      const required: string[] = [];
      const visit = (schema: Schema | undefined, seen: Set<string>) => {
        if (!schema) return;
        if (schema.$ref) {
          const name = schema.$ref.split('/').pop() ?? '';
          if (seen.has(name)) return;
          seen.add(name);
          const target = doc.components.schemas[name];
          for (const [property, value] of Object.entries(target.properties ?? {})) {
            if (value.default !== undefined) withDefault.push(`${name}.${property}`);
          }
          visit({ properties: target.properties }, seen);
          return;
        }
        for (const value of Object.values(schema.properties ?? {})) visit(value, seen);
        visit(schema.items, seen);
      };
      for (const { path, operation } of operations().filter((o) => o.method === 'patch')) {
        const body = operation.requestBody?.content['application/json']?.schema;
        visit(body, new Set());
        // The update bodies change any of their fields; the one-field PATCHes (status, toggle…) require it.
        const name = body?.$ref?.split('/').pop() ?? '';
        if (name.startsWith('Update'))
          required.push(...(schemaOf(body)?.required ?? []).map((p) => `${path}: ${p}`));
      }
      expect(withDefault).toEqual([]);
      expect(required).toEqual([]);
      const update = doc.components.schemas.UpdateAppDto;
      expect(update.required ?? []).toEqual([]);
      expect(update.properties?.active).not.toHaveProperty('default');
      expect(doc.components.schemas.UpdateEmailTemplateDto.properties?.isActive).not.toHaveProperty(
        'default',
      );
      expect(doc.components.schemas.UpdateEmailTemplateDto.properties?.version).not.toHaveProperty('default');
    });

    it('keeps the defaults of create bodies, and says them in words where a PATCH shares the schema', () => {
      expect(doc.components.schemas.CreateAppDto.properties?.active?.default).toBe(true);
      const timezone = doc.components.schemas.UserProfileInput.properties?.timezone;
      expect(timezone?.default).toBeUndefined();
      expect(timezone?.description).toContain('"UTC"');
    });

    it('a PATCH of the name leaves an inactive app inactive', async () => {
      const created = await admin.http.post('/admin/apps', {
        id: 'dormant-app',
        name: 'Dormant',
        active: false,
      });
      expect(created.status).toBe(201);
      const renamed = await admin.http.patch('/admin/apps/dormant-app', { name: 'Renamed' });
      expect(renamed.status).toBe(200);
      expect(renamed.body.data).toMatchObject({ name: 'Renamed', active: false });
      expect((await admin.http.get('/admin/apps/dormant-app')).body.data.active).toBe(false);
    });

    it('a PATCH of the subject leaves an inactive template inactive and at its version', async () => {
      const created = await admin.http.post('/admin/templates', {
        name: 'dormant',
        subject: 'Hello',
        htmlTemplate: '<p>Hello</p>',
        textTemplate: 'Hello',
        isActive: false,
        version: 7,
      });
      expect(created.status).toBe(200);
      const id = created.body.data._id as string;
      const patched = await admin.http.patch(`/admin/templates/${id}`, { subject: 'Hello again' });
      expect(patched.status).toBe(200);
      expect(patched.body.data).toMatchObject({ subject: 'Hello again', isActive: false });
      // An unsent version is raised by one (the documented rule), never reset to the create default of 1.
      expect(patched.body.data.version).toBe(8);
    });
  });

  describe('campaign analytics of an unknown campaign', () => {
    it('is a 404 for a well-formed id that names nothing, on the figures, the recipients and the stats', async () => {
      for (const url of [
        `/admin/email-events/analytics/campaigns/${UNKNOWN_ID}`,
        `/admin/email-events/analytics/campaigns/${UNKNOWN_ID}/recipients`,
        `/admin/email-events/campaign/${UNKNOWN_ID}/stats`,
      ]) {
        const res = await admin.http.get(url);
        expect({ url, status: res.status, body: res.body }).toEqual({
          url,
          status: 404,
          body: { success: false, error: 'Campaign not found' },
        });
      }
    });

    it('is zeros for a campaign whose mail is queued but has no event yet', async () => {
      const app = await seedApp(t);
      await t.app.get(ContactsService).findOrCreate('reader@example.com');
      const subscribed = await admin.http.post(`/admin/${app.id}/newsletter/subscribers`, {
        email: 'reader@example.com',
      });
      expect(subscribed.status).toBe(201);
      const campaign = await admin.http.post(`/admin/${app.id}/newsletter/campaigns`, {
        name: 'First',
        subject: 'Hello',
        htmlContent: '<p>Hello <a href="{{unsubscribeUrl}}">unsubscribe</a></p>',
      });
      const id = campaign.body.data._id as string;
      expect((await admin.http.post(`/admin/${app.id}/newsletter/campaigns/${id}/send`)).status).toBe(200);
      const figures = await admin.http.get(`/admin/email-events/analytics/campaigns/${id}`);
      expect(figures.status).toBe(200);
      expect(figures.body.data).toMatchObject({ campaignId: id, sent: 0, uniqueOpens: 0 });
    });

    it('states the pattern of the campaign id and of every ObjectId path parameter', () => {
      const parameter = doc.paths[
        '/admin/email-events/analytics/campaigns/{campaignId}'
      ].get.parameters?.find((p) => p.name === 'campaignId');
      expect(parameter?.schema?.pattern).toBeDefined();
      expect(new RegExp(parameter?.schema?.pattern ?? '^$').test(UNKNOWN_ID)).toBe(true);
      const contact = doc.paths['/admin/email-events/analytics/contacts/{contactId}'].get.parameters?.find(
        (p) => p.name === 'contactId',
      );
      expect(contact?.schema?.pattern).toBe('^[0-9a-f]{24}$');
    });
  });

  describe('a campaign body with a template', () => {
    it('does not list subject and htmlContent as required, and says when they are', () => {
      const create = doc.components.schemas.CreateCampaignDto;
      expect(create.required).toEqual(['name']);
      expect(create.properties?.subject?.description).toContain('templateId');
      expect(create.properties?.htmlContent?.description).toContain('templateId');
    });

    it('still answers 400 naming the field when neither the body nor a template gives it', async () => {
      const app = await seedApp(t);
      const url = `/admin/${app.id}/newsletter/campaigns`;
      const noSubject = await admin.http.post(url, { name: 'N', htmlContent: '<p>x</p>' });
      expect(noSubject.status).toBe(400);
      expect(noSubject.body.error).toMatch(/^subject /);
      const noHtml = await admin.http.post(url, { name: 'N', subject: 'S' });
      expect(noHtml.status).toBe(400);
      expect(noHtml.body.error).toMatch(/^htmlContent /);
    });
  });

  it('documents one id per app record (`id`; the payload keeps `_id` as the spec lists it)', async () => {
    const view = doc.components.schemas.AppView.properties ?? {};
    expect(Object.keys(view).filter((name) => /^_?id$/i.test(name))).toEqual(['id']);
    const schemasWithBoth = Object.entries(doc.components.schemas)
      .filter(([, schema]) => schema.properties?._id && schema.properties?.id)
      .map(([name]) => name);
    expect(schemasWithBoth).toEqual([]);
    await seedApp(t, { id: 'two-ids' });
    const payload = (await admin.http.get('/admin/apps/two-ids')).body.data;
    expect(payload).toMatchObject({ id: 'two-ids', _id: expect.any(String) });
  });

  it('names a server: the one serving the document, relative', () => {
    expect(doc.servers?.[0]?.url).toBe('/');
  });

  it('declares `security: []` on exactly the operations that take no credential of its schemes', () => {
    const policies = new Map(
      routeTable(t.app).map((route) => [
        `${route.method} ${route.path.replace(/:([A-Za-z]+)/g, '{$1}')}`,
        route.policy?.credential,
      ]),
    );
    const undeclared = operations().filter(({ operation }) => operation.security === undefined);
    expect(undeclared.map(({ method, path }) => `${method} ${path}`)).toEqual([]);
    const mismatched = operations()
      .filter(({ method, path }) => policies.has(`${method.toUpperCase()} ${path}`))
      .filter(({ method, path, operation }) => {
        const credential = policies.get(`${method.toUpperCase()} ${path}`);
        const open = credential === 'none' || credential === 'webhook-signature';
        return open !== (operation.security?.length === 0);
      })
      .map(({ method, path }) => `${method} ${path}`);
    expect(mismatched).toEqual([]);
    expect(doc.paths['/o/{token}'].get.security).toEqual([]);
  });

  it('gives every response a description', () => {
    const empty = operations().flatMap(({ method, path, operation }) =>
      Object.entries(operation.responses)
        .filter(([, response]) => !response.description)
        .map(([status]) => `${method} ${path} ${status}`),
    );
    expect(empty).toEqual([]);
  });

  describe('the back-office token and the end-user token', () => {
    let appId: string;
    let apiKey: string;
    let endUserToken: string;

    beforeAll(async () => {
      appId = (await seedApp(t)).id;
      apiKey = (await seedApiKey(t, appId)).value;
      const person = await t.app.get(ContactsService).findOrCreate('ada@example.com');
      endUserToken = await t.app.get(EndUserTokenService).sign({ id: String(person._id), appId }, 0);
    });

    it('are schemes a generator holds apart: HTTP bearer, and an apiKey header of its own', () => {
      const { bearer, 'end-user': endUser } = doc.components.securitySchemes;
      expect(bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
      expect(endUser).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-End-User-Token' });
    });

    it('an admin token sent on every call does not break an API-key route that takes an end user', async () => {
      const everywhere = t.http.with({ 'x-api-key': apiKey, authorization: `Bearer ${admin.token}` });
      const created = await everywhere.post(`/${appId}/wants`, {
        title: 'Dark mode',
        description: 'Please',
        category: 'ui',
      });
      expect(created.status).toBe(201);
      const listed = await everywhere.get(`/${appId}/wants`);
      expect(listed.status).toBe(200);
      expect(listed.body.data).toHaveLength(1);
    });

    it('takes the end-user token in X-End-User-Token, and still in Authorization', async () => {
      const backend = t.http.with({ 'x-api-key': apiKey });
      const want = await backend.post(`/${appId}/wants`, {
        title: 'Sync',
        description: 'Please',
        category: 'ui',
      });
      const id = want.body.data._id as string;
      const vote = await backend
        .with({ 'x-end-user-token': endUserToken })
        .post(`/${appId}/wants/${id}/vote`);
      expect(vote.body.data).toEqual({ voteCount: 1, hasVoted: true });
      // The same person through the older header: their vote, taken back.
      const again = await backend
        .with({ authorization: `Bearer ${endUserToken}` })
        .post(`/${appId}/wants/${id}/vote`);
      expect(again.body.data).toEqual({ voteCount: 0, hasVoted: false });
    });

    it('is read from X-End-User-Token on a route for end users, and a back-office token there is a 401', async () => {
      const res = await t.http.get(`/__guards/${appId}/end-user`, {
        headers: { 'x-end-user-token': endUserToken },
      });
      expect(res.status).toBe(200);
      const backOffice = await t.http.get(`/__guards/${appId}/end-user`, {
        headers: { 'x-end-user-token': admin.token },
      });
      expect(backOffice.status).toBe(401);
    });

    it('refuses a bad end-user token in its header (401), never passes it over', async () => {
      const backend = t.http.with({ 'x-api-key': apiKey });
      for (const value of ['not-a-token', admin.token, `${endUserToken.slice(0, -4)}AAAA`]) {
        const res = await backend.with({ 'x-end-user-token': value }).get(`/${appId}/wants`);
        expect({ value, status: res.status }).toEqual({ value, status: 401 });
      }
    });

    it('lets a browser send the header (CORS)', async () => {
      const preflight = await t.http.request('OPTIONS', `/${appId}/wants`, {
        headers: {
          origin: 'https://shop.example.com',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'x-end-user-token',
        },
      });
      expect(String(preflight.headers['access-control-allow-headers'])).toMatch(/X-End-User-Token/i);
    });
  });
});

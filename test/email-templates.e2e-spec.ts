import { EmailTemplatesService } from '../src/email/templates/email-templates.service';
import { createTestApp, resetDatabase, TestApp } from './helpers/app';
import { seedApp } from './helpers/factories';
import { createSessions, Session } from './helpers/session';

describe('E-mail templates', () => {
  let t: TestApp;
  let user: Session;
  let viewer: Session;
  let appId: string;
  let otherAppId: string;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await resetDatabase(t.connection);
    ({ user, viewer } = await createSessions(t));
    appId = (await seedApp(t)).id;
    otherAppId = (await seedApp(t)).id;
  });

  const valid = {
    name: 'welcome',
    subject: 'Welcome, {{firstName}}',
    htmlTemplate: '<p>Hello {{firstName}}</p>',
    textTemplate: 'Hello {{firstName}}',
  };
  const create = (body: Record<string, unknown>) => user.http.post('/admin/templates', { ...valid, ...body });
  const createId = async (body: Record<string, unknown> = {}) => {
    const res = await create(body);
    expect(res.status).toBe(200);
    return res.body.data._id as string;
  };
  const names = (res: { body: { data: { name: string; language: string }[] } }) =>
    res.body.data.map((d) => `${d.name}/${d.language}`);

  describe('POST /admin/templates', () => {
    it('creates a global template with the defaults (200)', async () => {
      const res = await create({});
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ success: true });
      expect(res.body.data).toEqual({
        _id: expect.any(String),
        appId: null,
        ...valid,
        language: 'en',
        variables: [],
        isActive: true,
        version: 1,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
    });

    it('creates an app template with every field', async () => {
      const res = await create({
        appId,
        name: '  order-shipped ',
        language: 'fr',
        variables: ['firstName', 'order.total'],
        isActive: false,
        version: 3,
        sender: { name: 'Shop', email: 'shop@example.com' },
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        appId,
        name: 'order-shipped',
        language: 'fr',
        variables: ['firstName', 'order.total'],
        isActive: false,
        version: 3,
        sender: { name: 'Shop', email: 'shop@example.com' },
      });
    });

    it('answers 409 for a taken scope + name + language, and allows the name elsewhere', async () => {
      await createId();
      const dup = await create({});
      expect(dup.status).toBe(409);
      expect(dup.body.success).toBe(false);
      expect((await create({ language: 'es' })).status).toBe(200);
      expect((await create({ appId })).status).toBe(200);
      expect((await create({ appId: otherAppId })).status).toBe(200);
      expect((await create({ appId })).status).toBe(409);
    });

    it('answers 404 for an unknown app', async () => {
      expect((await create({ appId: 'no-such-app' })).status).toBe(404);
    });

    it.each([
      ['htmlTemplate', '<p>{{#if x}}</p>'],
      ['textTemplate', 'Hi {{name'],
      ['subject', '{{/each}}'],
    ])('answers 400 when %s does not compile, with the engine’s message', async (field, source) => {
      const res = await create({ [field]: source });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(new RegExp(`^${field}: (Parse error|.*doesn't match)`));
    });

    it.each([
      ['language: nl', { language: 'nl' }, /language/],
      ['a blank name', { name: '   ' }, /name/],
      ['name: 101 characters', { name: 'x'.repeat(101) }, /name/],
      ['an empty subject', { subject: '' }, /subject/],
      ['htmlTemplate: missing', { htmlTemplate: undefined }, /htmlTemplate/],
      ['textTemplate: 200,001 characters', { textTemplate: 'x'.repeat(200_001) }, /textTemplate/],
      ['a variable that is not an identifier', { variables: ['ok', '1bad'] }, /variables/],
      ['variables not an array', { variables: 'firstName' }, /variables/],
      ['isActive: yes', { isActive: 'yes' }, /isActive/],
      ['version: 0', { version: 0 }, /version/],
      ['version: 1.5', { version: 1.5 }, /version/],
      ['a sender without email', { sender: { name: 'x' } }, /email/],
      [
        'an unknown sender field',
        { sender: { email: 'a@example.com', reply: 'x' } },
        /reply should not exist/,
      ],
      ['appId: Bad App', { appId: 'Bad App' }, /appId/],
      ['createdBy: me', { createdBy: 'me' }, /createdBy should not exist/],
    ])('answers 400 for %s', async (_label, override, message) => {
      const res = await create(override);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(message);
    });

    it('refuses writes to viewers (403) but lets them read', async () => {
      expect((await viewer.http.post('/admin/templates', valid)).status).toBe(403);
      expect((await viewer.http.get('/admin/templates')).status).toBe(200);
    });
  });

  describe('by id', () => {
    let globalId: string;
    let appTemplateId: string;
    beforeEach(async () => {
      globalId = await createId({ variables: ['firstName'], sender: { email: 'g@example.com' } });
      appTemplateId = await createId({ appId, name: 'receipt', language: 'de' });
    });

    it('gets a template in its scope only', async () => {
      const global = await viewer.http.get(`/admin/templates/${globalId}`);
      expect(global.status).toBe(200);
      expect(global.body.data).toMatchObject({ _id: globalId, appId: null, name: 'welcome' });
      const app = await viewer.http.get(`/admin/templates/${appTemplateId}`, { query: { appId } });
      expect(app.body.data).toMatchObject({ appId, name: 'receipt' });

      expect((await viewer.http.get(`/admin/templates/${appTemplateId}`)).status).toBe(404);
      expect((await viewer.http.get(`/admin/templates/${globalId}`, { query: { appId } })).status).toBe(404);
      expect(
        (await viewer.http.get(`/admin/templates/${appTemplateId}`, { query: { appId: otherAppId } })).status,
      ).toBe(404);
      expect((await viewer.http.get('/admin/templates/not-an-id')).status).toBe(404);
      expect((await viewer.http.get('/admin/templates/64b7f0000000000000000000')).status).toBe(404);
      expect(
        (await viewer.http.get(`/admin/templates/${globalId}`, { query: { appId: 'BAD' } })).status,
      ).toBe(400);
    });

    it('PUT replaces the template, resets omitted fields and bumps the version', async () => {
      const res = await user.http.put(`/admin/templates/${globalId}`, {
        name: 'welcome-v2',
        language: 'es',
        subject: 'Hola {{firstName}}',
        htmlTemplate: '<p>Hola</p>',
        textTemplate: 'Hola',
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        _id: globalId,
        appId: null,
        name: 'welcome-v2',
        language: 'es',
        subject: 'Hola {{firstName}}',
        variables: [],
        isActive: true,
        version: 2,
      });
      expect(res.body.data.sender).toBeUndefined();

      const withVersion = await user.http.put(`/admin/templates/${globalId}`, {
        ...valid,
        language: 'en',
        appId: null,
        version: 10,
        sender: { email: 'new@example.com' },
      });
      expect(withVersion.body.data).toMatchObject({ version: 10, sender: { email: 'new@example.com' } });
      const again = await user.http.put(
        `/admin/templates/${appTemplateId}`,
        { ...valid, language: 'de', appId },
        {
          query: { appId },
        },
      );
      expect(again.body.data).toMatchObject({ appId, name: 'welcome', version: 2 });
    });

    it('PUT refuses a missing field, a scope move, another scope and a bad template', async () => {
      const url = `/admin/templates/${globalId}`;
      const full = { ...valid, language: 'en' };
      expect((await user.http.put(url, valid)).body.error).toMatch(/language/);
      expect((await user.http.put(url, { ...full, subject: undefined })).status).toBe(400);
      const moved = await user.http.put(url, { ...full, appId });
      expect(moved.status).toBe(400);
      expect(moved.body.error).toMatch(/appId/);
      expect((await user.http.put(url, full, { query: { appId } })).status).toBe(404);
      const broken = await user.http.put(url, { ...full, htmlTemplate: '{{#each}}' });
      expect(broken.status).toBe(400);
      expect(broken.body.error).toMatch(/^htmlTemplate: Parse error on line 1/);
      expect((await user.http.put('/admin/templates/nope', full)).status).toBe(404);
      // Renaming onto another template of the scope is a conflict.
      await createId({ name: 'other' });
      expect((await user.http.put(url, { ...full, name: 'other' })).status).toBe(409);
      expect((await viewer.http.put(url, full)).status).toBe(403);
      expect((await viewer.http.get(url)).body.data.version).toBe(1);
    });

    it('PATCH changes only what is sent and bumps the version', async () => {
      const url = `/admin/templates/${globalId}`;
      const res = await user.http.patch(url, { subject: 'New {{x}}' });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        ...valid,
        subject: 'New {{x}}',
        variables: ['firstName'],
        sender: { email: 'g@example.com' },
        version: 2,
      });
      const pinned = await user.http.patch(url, { isActive: false, version: 7 });
      expect(pinned.body.data).toMatchObject({ isActive: false, version: 7, subject: 'New {{x}}' });
      const unsent = await user.http.patch(url, { sender: null });
      expect(unsent.body.data.sender).toBeUndefined();
      expect(unsent.body.data.version).toBe(8);
      // An empty PATCH is a 400 now (it used to answer 200 without a change): nothing to update.
      const empty = await user.http.patch(url, {});
      expect(empty.status).toBe(400);
      expect(empty.body.error).toMatch(/^Nothing to update/);
      expect((await user.http.get(url)).body.data.version).toBe(8);
      const scoped = await user.http.patch(
        `/admin/templates/${appTemplateId}`,
        { language: 'it' },
        {
          query: { appId },
        },
      );
      expect(scoped.body.data).toMatchObject({ language: 'it', name: 'receipt', appId });
    });

    it('PATCH refuses nulls, bad values, a scope move and another scope', async () => {
      const url = `/admin/templates/${globalId}`;
      expect((await user.http.patch(url, { name: null })).body.error).toMatch(/name must not be null/);
      expect((await user.http.patch(url, { language: 'xx' })).status).toBe(400);
      expect((await user.http.patch(url, { appId })).status).toBe(400);
      expect((await user.http.patch(url, { appId: null, isActive: false })).status).toBe(200);
      expect((await user.http.patch(url, { subject: 'x' }, { query: { appId } })).status).toBe(404);
      const broken = await user.http.patch(url, { textTemplate: '{{#if a}}x' });
      expect(broken.status).toBe(400);
      expect(broken.body.error).toMatch(/^textTemplate: Parse error/);
      expect((await user.http.patch('/admin/templates/123', { subject: 'x' })).status).toBe(404);
    });

    it('DELETE removes a template of the scope only', async () => {
      expect((await user.http.delete(`/admin/templates/${appTemplateId}`)).status).toBe(404);
      expect(
        (await viewer.http.delete(`/admin/templates/${appTemplateId}`, undefined, { query: { appId } }))
          .status,
      ).toBe(403);
      const res = await user.http.delete(`/admin/templates/${appTemplateId}`, undefined, {
        query: { appId },
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, message: 'Template deleted' });
      expect((await viewer.http.get(`/admin/templates/${appTemplateId}`, { query: { appId } })).status).toBe(
        404,
      );
      expect((await user.http.delete('/admin/templates/not-an-id')).status).toBe(404);
      expect((await user.http.delete(`/admin/templates/${globalId}`)).status).toBe(200);
    });

    it('toggle sets isActive to the value sent, in the body’s scope', async () => {
      const off = await user.http.patch(`/admin/templates/${globalId}/toggle`, { isActive: false });
      expect(off.status).toBe(200);
      expect(off.body.data).toMatchObject({ isActive: false, version: 1 });
      const stillOff = await user.http.patch(`/admin/templates/${globalId}/toggle`, {
        appId: null,
        isActive: false,
      });
      expect(stillOff.body.data.isActive).toBe(false);
      const on = await user.http.patch(`/admin/templates/${appTemplateId}/toggle`, { appId, isActive: true });
      expect(on.body.data.isActive).toBe(true);
      expect(
        (await user.http.patch(`/admin/templates/${appTemplateId}/toggle`, { isActive: false })).status,
      ).toBe(404);
      expect((await user.http.patch(`/admin/templates/${globalId}/toggle`, {})).status).toBe(400);
      expect((await user.http.patch(`/admin/templates/${globalId}/toggle`, { isActive: 'no' })).status).toBe(
        400,
      );
      expect((await user.http.patch('/admin/templates/x/toggle', { isActive: true })).status).toBe(404);
    });

    it('duplicate copies into the target scope, with a default name, at version 1', async () => {
      await user.http.patch(`/admin/templates/${globalId}`, { version: 4 });
      const toApp = await user.http.post(`/admin/templates/${globalId}/duplicate`, { appId });
      expect(toApp.status).toBe(200);
      expect(toApp.body.data).toMatchObject({
        appId,
        name: 'welcome (copy)',
        language: 'en',
        subject: valid.subject,
        variables: ['firstName'],
        sender: { email: 'g@example.com' },
        version: 1,
      });
      expect(toApp.body.data._id).not.toBe(globalId);
      // The same name is free in another scope; taken in the same one.
      const sameName = await user.http.post(`/admin/templates/${globalId}/duplicate`, {
        appId,
        name: 'welcome',
      });
      expect(sameName.body.data).toMatchObject({ appId, name: 'welcome' });
      expect((await user.http.post(`/admin/templates/${globalId}/duplicate`, { appId })).status).toBe(409);

      const toGlobal = await user.http.post(`/admin/templates/${appTemplateId}/duplicate`, { appId: null });
      expect(toGlobal.body.data).toMatchObject({ appId: null, name: 'receipt (copy)', language: 'de' });
      const named = await user.http.post(`/admin/templates/${appTemplateId}/duplicate`, {
        name: ' receipt ',
      });
      expect(named.body.data).toMatchObject({ appId: null, name: 'receipt' });

      expect(
        (await user.http.post(`/admin/templates/${globalId}/duplicate`, { appId: 'no-app' })).status,
      ).toBe(404);
      expect((await user.http.post('/admin/templates/nope/duplicate', {})).status).toBe(404);
      expect((await user.http.post(`/admin/templates/${globalId}/duplicate`, { name: '' })).status).toBe(400);
      expect((await viewer.http.post(`/admin/templates/${globalId}/duplicate`, {})).status).toBe(403);
    });
  });

  describe('lists', () => {
    beforeEach(async () => {
      await createId({ name: 'welcome', language: 'en' });
      await createId({ name: 'welcome', language: 'fr', subject: 'Bienvenue' });
      await createId({ name: 'alert', language: 'fr', isActive: false, subject: 'Alerte 50% off' });
      await createId({ name: 'receipt', language: 'en' });
      await createId({ appId, name: 'zeta', language: 'de' });
      await createId({ appId, name: 'beta', language: 'de' });
      await createId({ appId: otherAppId, name: 'other', language: 'pt' });
    });

    it('categories count languages per scope', async () => {
      const global = await viewer.http.get('/admin/templates/categories');
      expect(global.status).toBe(200);
      expect(global.body).toEqual({
        success: true,
        data: [
          { language: 'en', count: 2 },
          { language: 'fr', count: 2 },
        ],
      });
      const app = await viewer.http.get('/admin/templates/categories', { query: { appId } });
      expect(app.body.data).toEqual([{ language: 'de', count: 2 }]);
      const none = await viewer.http.get('/admin/templates/categories', { query: { appId: 'unknown-app' } });
      expect(none.body.data).toEqual([]);
      expect((await viewer.http.get('/admin/templates/categories', { query: { appId: 'Bad' } })).status).toBe(
        400,
      );
      expect((await viewer.http.get('/admin/templates/categories', { query: { lang: 'en' } })).status).toBe(
        400,
      );
    });

    it('lists one scope by name then language, with filters, search and pagination', async () => {
      const global = await viewer.http.get('/admin/templates');
      expect(global.status).toBe(200);
      expect(names(global)).toEqual(['alert/fr', 'receipt/en', 'welcome/en', 'welcome/fr']);
      expect(global.body.pagination).toMatchObject({
        page: 1,
        limit: 20,
        total: 4,
        pages: 1,
        totalCapped: false,
      });
      expect(names(await viewer.http.get('/admin/templates', { query: { appId } }))).toEqual([
        'beta/de',
        'zeta/de',
      ]);
      expect(names(await viewer.http.get('/admin/templates', { query: { language: 'fr' } }))).toEqual([
        'alert/fr',
        'welcome/fr',
      ]);
      expect(names(await viewer.http.get('/admin/templates', { query: { isActive: 'false' } }))).toEqual([
        'alert/fr',
      ]);
      expect(
        names(await viewer.http.get('/admin/templates', { query: { isActive: 'true', language: 'fr' } })),
      ).toEqual(['welcome/fr']);
      expect(names(await viewer.http.get('/admin/templates', { query: { search: 'BIENV' } }))).toEqual([
        'welcome/fr',
      ]);
      expect(names(await viewer.http.get('/admin/templates', { query: { search: 'recei' } }))).toEqual([
        'receipt/en',
      ]);
      // Regex characters are literal.
      expect(names(await viewer.http.get('/admin/templates', { query: { search: '50% off' } }))).toEqual([
        'alert/fr',
      ]);
      expect(names(await viewer.http.get('/admin/templates', { query: { search: '.*' } }))).toEqual([]);
      const second = await viewer.http.get('/admin/templates', { query: { limit: 3, page: 2 } });
      expect(names(second)).toEqual(['welcome/fr']);
      expect(second.body.pagination).toMatchObject({
        page: 2,
        limit: 3,
        total: 4,
        pages: 2,
        totalCapped: false,
      });
    });

    it.each<Record<string, string>>([
      { isActive: 'yes' },
      { isActive: '1' },
      { language: 'nl' },
      { limit: '0' },
      { page: 'x' },
      { appId: 'Not An App' },
      { sort: 'name' },
    ])('answers 400 for list query %p', async (query) => {
      const res = await viewer.http.get('/admin/templates', { query });
      expect(res.status).toBe(400);
      expect(res.body.success).toBe(false);
    });

    it('answers 400 for a search longer than 100 characters', async () => {
      const res = await viewer.http.get('/admin/templates', { query: { search: 'x'.repeat(101) } });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/search/);
    });
  });

  describe('EmailTemplatesService for senders', () => {
    let service: EmailTemplatesService;
    beforeEach(() => {
      service = t.app.get(EmailTemplatesService);
    });

    it('resolves app + language → app + en → global + language → global + en, active only', async () => {
      const ids = {
        appFr: await createId({ appId, language: 'fr', subject: 'app fr' }),
        appEn: await createId({ appId, language: 'en', subject: 'app en' }),
        globalFr: await createId({ language: 'fr', subject: 'global fr' }),
        globalEn: await createId({ language: 'en', subject: 'global en' }),
      };
      await createId({ appId: otherAppId, language: 'fr', subject: 'other app fr' });
      const resolve = async (app: string | null, language = 'fr') =>
        (await service.resolveForSending(app, 'welcome', language))?.subject ?? null;

      expect(await resolve(appId)).toBe('app fr');
      const off = (id: string, scope: string | null) =>
        user.http.patch(`/admin/templates/${id}/toggle`, { appId: scope, isActive: false });
      await off(ids.appFr, appId);
      expect(await resolve(appId)).toBe('app en');
      await off(ids.appEn, appId);
      expect(await resolve(appId)).toBe('global fr');
      await off(ids.globalFr, null);
      expect(await resolve(appId)).toBe('global en');
      await off(ids.globalEn, null);
      expect(await resolve(appId)).toBeNull();

      await user.http.patch(`/admin/templates/${ids.globalEn}/toggle`, { isActive: true });
      expect(await resolve(null, 'fr')).toBe('global en');
      expect(await resolve(otherAppId, 'fr')).toBe('other app fr');
      expect(await resolve(appId, 'nl')).toBe('global en');
      expect(await service.resolveForSending(appId, 'no-such-template', 'en')).toBeNull();
    });

    it('renders with HTML escaped in the html body only; missing variables render empty', async () => {
      const id = await createId({
        subject: 'Order for {{name}} & co',
        htmlTemplate: '<p>{{name}} – {{missing}}</p>',
        textTemplate: '{{name}} & {{missing}}',
        variables: ['name', 'missing'],
      });
      const template = await service.get(id, null);
      expect(await service.render(template, { name: 'Tom & <Jerry>' })).toEqual({
        subject: 'Order for Tom & <Jerry> & co',
        html: '<p>Tom &amp; &lt;Jerry&gt; – </p>',
        text: 'Tom & <Jerry> & ',
      });
      await user.http.patch(`/admin/templates/${id}`, { textTemplate: 'Changed {{name}}' });
      const changed = await service.get(id, null);
      expect((await service.render(changed, { name: 'A' })).text).toBe('Changed A');
    });
  });
});

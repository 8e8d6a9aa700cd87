import type * as JsYaml from 'js-yaml';
import { isISO8601 } from 'class-validator';
import { isOriginPattern } from '../src/common/auth/origin-match';
import { Role } from '../src/common/auth/roles';
import { TOO_MANY_REQUESTS_MESSAGE } from '../src/common/http/rate-limit';
import { createTestApp, TestApp } from './helpers/app';
import { createSession, Session } from './helpers/session';

/** The parts of the document these tests read. */
interface Schema {
  $ref?: string;
  description?: string;
  maxProperties?: number;
  type?: string;
  format?: string;
  pattern?: string;
  nullable?: boolean;
  minLength?: number;
  maxLength?: number;
  minProperties?: number;
  required?: string[];
  additionalProperties?: boolean | Schema;
  properties?: Record<string, Schema>;
}
interface Media {
  schema?: Schema;
  example?: unknown;
}
interface Operation {
  operationId: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; schema?: Schema }[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { description: string; content?: Record<string, Media> }>;
}
interface Document {
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; securitySchemes: Record<string, { description?: string }> };
}
interface Entry {
  method: string;
  path: string;
  operation: Operation;
}

const OBJECT_ID = '0123456789abcdef01234567';

describe('The OpenAPI document (/docs-json) tells the truth', () => {
  let t: TestApp;
  let doc: Document;
  let operations: Entry[];
  let admin: Session;

  const name = ({ method, path }: Entry) => `${method.toUpperCase()} ${path}`;
  const schemaOf = (ref: string | undefined) => doc.components.schemas[ref?.split('/').pop() ?? ''];
  const exampleOf = (operation: Operation, status: number) =>
    (operation.responses[status]?.content?.['application/json']?.example as { error?: string } | undefined)
      ?.error;

  beforeAll(async () => {
    t = await createTestApp();
    doc = (await t.http.get('/docs-json')).body as Document;
    operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({ method, path, operation })),
    );
    admin = await createSession(t, Role.Admin);
  });
  afterAll(() => t.close());

  it('gives every operation a unique camelCase operationId', () => {
    const ids = operations.map((o) => o.operation.operationId);
    expect(ids.filter((id) => !/^[a-z][a-zA-Z0-9]*$/.test(id))).toEqual([]);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    expect(doc.paths['/users'].get.operationId).toBe('listUsers');
    expect(doc.paths['/api-keys'].post.operationId).toBe('createApiKey');
  });

  it('documents 429 and 500 with the error envelope and an example on every operation', () => {
    const missing = operations
      .filter(({ operation }) =>
        [429, 500].some(
          (status) =>
            operation.responses[status]?.content?.['application/json']?.schema?.$ref !==
              '#/components/schemas/ErrorSchema' || !exampleOf(operation, status),
        ),
      )
      .map(name);
    expect(missing).toEqual([]);
    expect(exampleOf(doc.paths['/health'].get, 429)).toBe(TOO_MANY_REQUESTS_MESSAGE);
  });

  it('documents 400, 413 and 415 on every operation with a body, and 400, 404, 414 with path parameters', () => {
    const missing: string[] = [];
    for (const entry of operations) {
      const { operation } = entry;
      const expected = [
        ...(operation.requestBody ? [400, 413, 415] : []),
        ...(operation.parameters?.some((p) => p.in === 'path') ? [400, 404, 414] : []),
      ];
      for (const status of expected)
        if (!operation.responses[status]) missing.push(`${name(entry)} ${status}`);
    }
    expect(missing).toEqual([]);
  });

  it('gives each error status its own example, per credential', () => {
    const me = doc.paths['/users/{id}'].get;
    expect(exampleOf(me, 401)).toBe('Missing bearer token');
    expect(exampleOf(me, 403)).toBe('Your role does not allow this operation');
    expect(exampleOf(me, 404)).toBe('User not found');
    expect(exampleOf(doc.paths['/{appId}/wants'].get, 401)).toBe('Missing X-API-Key header');
    expect(exampleOf(doc.paths['/users'].post, 400)).toMatch(/^email must be a string; /);
    const examples = new Set(
      operations.flatMap(({ operation }) => [401, 403, 404].map((s) => exampleOf(operation, s))),
    );
    expect(examples.has('email must be an email')).toBe(false);
  });

  it('documents the 401 and 403 messages the server really sends', async () => {
    const anonymous = await t.http.get(`/users/${OBJECT_ID}`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error).toBe(exampleOf(doc.paths['/users/{id}'].get, 401));
    const viewer = await createSession(t, Role.Viewer);
    const refused = await viewer.http.post('/users', {});
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe(exampleOf(doc.paths['/users'].post, 403));
    const unknown = await admin.http.get(`/users/${OBJECT_ID}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe(exampleOf(doc.paths['/users/{id}'].get, 404));
    const badLink = await t.http.post('/auth/magic-link/verify', { token: 'x'.repeat(43) });
    expect(badLink.status).toBe(401);
    expect(badLink.body.error).toBe(exampleOf(doc.paths['/auth/magic-link/verify'].post, 401));
    expect(exampleOf(doc.paths['/auth/magic-link/verify'].post, 403)).toBe('This app is inactive');
  });

  it('documents one credential per operation: its alternatives all require the same scheme first', () => {
    const mixed = operations
      .filter(({ operation }) => new Set((operation.security ?? []).map((s) => Object.keys(s)[0])).size > 1)
      .map(name);
    expect(mixed).toEqual([]);
    expect(doc.paths['/users'].get.security).toEqual([{ bearer: [] }]);
    expect(doc.paths['/health'].get.security ?? []).toEqual([]);
    expect(doc.paths['/auth/magic-link'].post.security ?? []).toEqual([]);
  });

  it('documents the optional end-user token on the wants routes: the API key alone, or with it', () => {
    const alternatives = [{ 'api-key': [] }, { 'api-key': [], 'end-user': [] }];
    for (const [path, method] of [
      ['/{appId}/wants', 'get'],
      ['/{appId}/wants', 'post'],
      ['/{appId}/wants/{id}', 'get'],
      ['/{appId}/wants/{id}/vote', 'post'],
    ]) {
      expect({ path, method, security: doc.paths[path][method].security }).toEqual({
        path,
        method,
        security: alternatives,
      });
    }
    expect(doc.paths['/admin/{appId}/wants'].get.security).toEqual([{ bearer: [] }]);
  });

  it('describes every tag it uses', () => {
    const described = new Map((doc.tags ?? []).map((tag) => [tag.name, tag.description ?? '']));
    const used = new Set(operations.flatMap(({ operation }) => operation.tags ?? []));
    expect([...used].filter((tag) => !described.get(tag))).toEqual([]);
  });

  it('writes no bare <placeholder> in descriptions (Markdown would eat it as an HTML tag)', () => {
    const bare: string[] = [];
    JSON.stringify(doc, (key, value: unknown) => {
      if (
        key === 'description' &&
        typeof value === 'string' &&
        /<[a-zA-Z]/.test(value.replace(/`[^`]*`/g, ''))
      )
        bare.push(value);
      return value;
    });
    expect(bare).toEqual([]);
    expect(doc.components.securitySchemes['api-key'].description).toContain('`sk_<appId>_…`');
  });

  it('closes request bodies (additionalProperties: false), nested validated objects included', () => {
    const open: string[] = [];
    // The provider webhooks take any JSON object in the provider's own format (ProviderEvent).
    for (const entry of operations.filter(({ operation }) => !operation.tags?.includes('Webhooks'))) {
      const schema = entry.operation.requestBody?.content['application/json']?.schema;
      if (schema?.$ref && schemaOf(schema.$ref).additionalProperties !== false) open.push(name(entry));
    }
    expect(open).toEqual([]);
    expect(doc.components.schemas.UserProfileInput.additionalProperties).toBe(false);
  });

  it('gives JSON bodies a request example', () => {
    const without = operations
      .filter(({ operation }) => {
        const media = operation.requestBody?.content['application/json'];
        return media && media.example === undefined;
      })
      .map(name);
    expect(without).toEqual([]);
  });

  it('carries the constraints the ValidationPipe enforces', () => {
    const { CreateUserDto, UpdateApiKeyDto } = doc.components.schemas;
    expect(CreateUserDto.properties?.email).toMatchObject({
      type: 'string',
      format: 'email',
      maxLength: 254,
    });
    expect(CreateUserDto.properties?.firstName).toMatchObject({ minLength: 1, maxLength: 100 });
    expect(UpdateApiKeyDto.properties?.description).toMatchObject({
      type: 'string',
      nullable: true,
      maxLength: 500,
    });
    expect(UpdateApiKeyDto.properties?.expiresAt).toMatchObject({ type: 'string', format: 'date-time' });
    const id = doc.paths['/users/{id}'].get.parameters?.find((p) => p.name === 'id');
    expect(id?.schema).toMatchObject({ type: 'string', pattern: '^[0-9a-f]{24}$' });
    const appId = doc.paths['/admin/apps/{id}'].get.parameters?.find((p) => p.name === 'id');
    expect(appId?.schema?.pattern).toBeUndefined();
  });

  it('serves /docs-yaml, the same document, written once however often it is asked for', async () => {
    const yaml = jest.requireActual<typeof JsYaml>('js-yaml');
    const dump = jest.spyOn(yaml, 'dump');
    try {
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await t.http.get('/docs-yaml'));
      for (const res of answers) {
        expect(res.status).toBe(200);
        expect(res.headers['content-type']).toMatch(/^text\/yaml/);
        expect(res.text).toBe(answers[0].text);
      }
      const parsed = yaml.load(answers[0].text) as Document;
      expect(Object.keys(parsed.paths)).toEqual(Object.keys(doc.paths));
      expect(dump).toHaveBeenCalledTimes(1);
    } finally {
      dump.mockRestore();
    }
  });

  it('says what the validators enforce on origins, app features and channels, analytics dates', () => {
    const { CreateAppDto } = doc.components.schemas;
    const origins = CreateAppDto.properties?.allowedOrigins as Schema & { items: Schema };
    const origin = new RegExp(origins.items.pattern!);
    const entries = [
      '*',
      '*.shop.example',
      'https://*.shop.example:8443',
      'https://shop.example',
      'http://[::1]:3000',
    ];
    const refused = [
      'shop.example',
      'ftp://shop.example',
      'https://*',
      '*.',
      'https://sh*p.example',
      'https://',
    ];
    for (const entry of entries)
      expect({ entry, pattern: origin.test(entry), valid: isOriginPattern(entry) }).toEqual({
        entry,
        pattern: true,
        valid: true,
      });
    for (const entry of refused)
      expect({ entry, pattern: origin.test(entry), valid: isOriginPattern(entry) }).toEqual({
        entry,
        pattern: false,
        valid: false,
      });
    expect(CreateAppDto.properties?.features?.description).toMatch(/Names: a letter/);
    expect(CreateAppDto.properties?.chatChannels).toMatchObject({ maxProperties: 50 });

    const parameters = doc.paths['/admin/email-events/analytics/overview'].get.parameters ?? [];
    const byName = Object.fromEntries(parameters.map((p) => [p.name, p.schema!]));
    expect(byName.appId).toMatchObject({ pattern: '^[a-z0-9][a-z0-9-]*$', maxLength: 100 });
    const date = new RegExp(byName.from.pattern!);
    expect(byName.to.pattern).toBe(byName.from.pattern);
    for (const value of ['2026-11-28', '2026-11-28T06:00:00Z', '2026-11-28T06:00+01:00']) {
      expect({ value, pattern: date.test(value), valid: isISO8601(value, { strict: true }) }).toEqual({
        value,
        pattern: true,
        valid: true,
      });
    }
    for (const value of ['yesterday', '28/11/2026', '2026-11-28 junk']) expect(date.test(value)).toBe(false);
  });

  it('turns on persistAuthorization in Swagger UI', async () => {
    const init = await t.http.get('/docs/swagger-ui-init.js');
    expect(init.status).toBe(200);
    expect(init.text).toMatch(/"persistAuthorization":\s*true/);
  });

  describe('an empty PATCH body is a 400 on every PATCH route that updates fields', () => {
    it('documents it (minProperties: 1) on every PATCH body without required fields', () => {
      const patches = operations.filter((o) => o.method === 'patch');
      expect(patches.length).toBeGreaterThan(8);
      const loose = patches.filter(({ operation }) => {
        const body = schemaOf(operation.requestBody?.content['application/json']?.schema?.$ref);
        return !body?.required?.length && body?.minProperties !== 1;
      });
      expect(loose.map(name)).toEqual([]);
    });

    it('answers it', async () => {
      const patches = operations.filter(({ method, operation }) => {
        const body = schemaOf(operation.requestBody?.content['application/json']?.schema?.$ref);
        return method === 'patch' && body?.minProperties === 1;
      });
      expect(patches.map((p) => p.operation.operationId).sort()).toEqual([
        'updateAnyTicket',
        'updateApiKey',
        'updateApp',
        'updateCampaign',
        'updateChatRoutingRule',
        'updateFeedback',
        'updateNewsletterTemplate',
        'updateTemplate',
        'updateTicket',
        'updateUser',
        'updateWant',
      ]);
      for (const { path } of patches) {
        const url = path.replace('{appId}', 'my-app').replace(/\{\w+\}/g, OBJECT_ID);
        const res = await admin.http.patch(url, {});
        expect({ url, status: res.status, error: res.body.error }).toEqual({
          url,
          status: 400,
          error: expect.stringMatching(/^Nothing to update: send at least one of \w+/),
        });
      }
    });
  });
});

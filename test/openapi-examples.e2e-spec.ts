import { Script } from 'node:vm';
import { Role } from '../src/common/auth/roles';
import { createTestApp, resetDatabase, TestApp } from './helpers/app';
import { createSession, Session } from './helpers/session';

/** The parts of /docs-json these tests read. */
interface Schema {
  $ref?: string;
  type?: string;
  example?: unknown;
  additionalProperties?: boolean | Schema;
  properties?: Record<string, Schema>;
  items?: Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
}
interface Media {
  schema?: Schema;
  example?: unknown;
}
interface Operation {
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, Schema>;
    securitySchemes: Record<string, { type: string; description?: string }>;
  };
}

/** What Swagger UI would show as a value if nobody wrote one, and the filler text examples once carried. */
const PLACEHOLDERS = new Set(['string', 'Example text']);
/** The made-up id request examples once carried (a 404 wherever it is sent). */
const MADE_UP_ID = '0123456789abcdef01234567';

/** Every string inside a value, with where it is (`.profile.bio`, `.ids[0]`). */
function stringsIn(value: unknown, at = ''): { at: string; text: string }[] {
  if (typeof value === 'string') return [{ at, text: value }];
  if (Array.isArray(value)) return value.flatMap((item, i) => stringsIn(item, `${at}[${i}]`));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, item]) => stringsIn(item, `${at}.${key}`));
  }
  return [];
}

/** Every schema object inside a schema (not following $ref), with where it is. */
function schemasIn(schema: Schema | undefined, at: string): { at: string; schema: Schema }[] {
  if (!schema) return [];
  const nested = [
    ...Object.entries(schema.properties ?? {}).map(([name, inner]) => schemasIn(inner, `${at}.${name}`)),
    schemasIn(schema.items, `${at}[]`),
    typeof schema.additionalProperties === 'object' ? schemasIn(schema.additionalProperties, `${at}{*}`) : [],
    ...[...(schema.allOf ?? []), ...(schema.oneOf ?? []), ...(schema.anyOf ?? [])].map((inner) =>
      schemasIn(inner, at),
    ),
  ];
  return [{ at, schema }, ...nested.flat()];
}

describe('The examples staff see in Swagger UI (/docs-json)', () => {
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
  const jsonExample = (path: string, method: string) =>
    doc.paths[path][method].requestBody?.content['application/json']?.example as Record<string, unknown>;

  beforeAll(async () => {
    t = await createTestApp();
    await resetDatabase(t.connection);
    doc = (await t.http.get('/docs-json')).body as Document;
    admin = await createSession(t, Role.Admin);
  });
  afterAll(() => t.close());

  it('fills every JSON request body with real values: no placeholder text, no made-up id', () => {
    const bodies = operations().filter(({ operation }) => operation.requestBody?.content['application/json']);
    expect(bodies.length).toBeGreaterThan(30);
    const found = bodies.flatMap(({ name, operation }) => {
      const example = operation.requestBody?.content['application/json'].example;
      if (example === undefined) return [`${name}: no example`];
      return stringsIn(example)
        .filter(({ text }) => PLACEHOLDERS.has(text) || text === MADE_UP_ID)
        .map(({ at, text }) => `${name} ${at}: ${JSON.stringify(text)}`);
    });
    expect(found).toEqual([]);
    expect(jsonExample('/auth/login', 'post').password).toEqual(expect.any(String));
    expect(jsonExample('/admin/apps', 'post')).toMatchObject({
      name: 'My Shop',
      description: expect.stringMatching(/\w+ \w+/),
    });
  });

  it('leaves optional ids out of request examples (a made-up template is a 404)', () => {
    expect(jsonExample('/admin/{appId}/newsletter/campaigns', 'post')).not.toHaveProperty('templateId');
  });

  it('gives every free-form object an example (Swagger UI would show additionalProp1…)', () => {
    const roots = [
      ...Object.entries(doc.components.schemas).map(([name, schema]) => ({ at: name, schema })),
      ...operations().flatMap(({ name, operation }) =>
        Object.entries(operation.responses).flatMap(([status, response]) =>
          Object.values(response.content ?? {}).map((media) => ({
            at: `${name} ${status}`,
            schema: media.example === undefined ? media.schema : undefined,
          })),
        ),
      ),
    ];
    const open = roots
      .flatMap(({ at, schema }) => schemasIn(schema, at))
      .filter(({ schema }) => {
        const freeForm = schema.additionalProperties !== undefined && schema.additionalProperties !== false;
        const bare =
          schema.type === 'object' && !schema.properties && schema.additionalProperties === undefined;
        return (freeForm || bare) && !schema.properties && schema.example === undefined;
      })
      .map(({ at }) => at);
    expect(open).toEqual([]);
  });

  it('shows on every answer with a message the one the route sends, not Swagger UI\'s "string"', () => {
    const unnamed = operations().flatMap(({ name, operation }) =>
      Object.entries(operation.responses)
        .filter(([status]) => status.startsWith('2'))
        .flatMap(([status, response]) => {
          const media = response.content?.['application/json'];
          const message = media?.schema?.properties?.message;
          const documented =
            message?.example ?? (media?.example as { message?: unknown } | undefined)?.message;
          const hasMessage = message || media?.schema?.$ref?.endsWith('/DoneSchema');
          return hasMessage && typeof documented !== 'string' ? [`${name} ${status}`] : [];
        }),
    );
    expect(unnamed).toEqual([]);
  });

  it('describes every security scheme and lists bearer (the staff one) first', () => {
    const schemes = Object.entries(doc.components.securitySchemes);
    expect(schemes.filter(([, scheme]) => !scheme.description?.trim()).map(([name]) => name)).toEqual([]);
    expect(schemes[0][0]).toBe('bearer');
    expect(doc.components.securitySchemes.bearer.description).toContain('POST /auth/login');
  });

  it('shows a draft campaign as POST answers one: nothing sent, no template', () => {
    const campaign = doc.components.schemas.CampaignView.properties ?? {};
    expect(campaign.status.example).toBe('draft');
    expect(campaign.sentAt.example).toBeNull();
    expect(campaign.completedAt.example).toBeNull();
    expect(campaign.templateId.example).toBeNull();
  });

  it('lets staff run the story as shown: the app example, then a campaign of that app', async () => {
    const app = jsonExample('/admin/apps', 'post');
    const created = await admin.http.post('/admin/apps', app);
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ id: app.id, name: app.name });
    const createApp = doc.paths['/admin/apps'].post.responses['201'].content?.['application/json'];
    expect(created.body.message).toBe(createApp?.schema?.properties?.message.example);

    // The app id in the path is the one the example created; the answer is what the response example shows.
    const campaign = await admin.http.post(
      `/admin/${String(app.id)}/newsletter/campaigns`,
      jsonExample('/admin/{appId}/newsletter/campaigns', 'post'),
    );
    expect(campaign.status).toBe(201);
    const shown = doc.components.schemas.CampaignView.properties ?? {};
    for (const field of ['status', 'sentAt', 'completedAt', 'templateId', 'heldReason', 'appId']) {
      expect({ field, value: campaign.body.data[field] }).toEqual({ field, value: shown[field].example });
    }
  });

  it('serves a Swagger UI start-up script that parses, with the sign-in and Authorize plugins', async () => {
    const init = await t.http.get('/docs/swagger-ui-init.js');
    expect(init.status).toBe(200);
    // The plugins are written into the script as source text: it must still compile (it is not run here).
    expect(() => new Script(init.text)).not.toThrow();
    expect(init.text).toContain('function signInFromLoginPlugin');
    expect(init.text).toContain('function authorizeDialogPlugin');
    expect(init.text).toContain("'/auth/login'");
  });
});

import { CONTENT_BODY_BYTES } from '../src/common/http/body/body-policy';
import {
  CAMPAIGN_CONTENT_MAX,
  CAMPAIGN_NAME_MAX,
  CAMPAIGN_SUBJECT_MAX,
} from '../src/newsletter/campaigns/schemas/campaign.schema';
import {
  TEMPLATE_CONTENT_MAX,
  TEMPLATE_NAME_MAX,
  TEMPLATE_SUBJECT_MAX,
} from '../src/newsletter/templates/schemas/newsletter-template.schema';
import { createTestApp, resetDatabase, TestApp } from './helpers/app';
import { seedApp } from './helpers/factories';
import { createSessions, Session } from './helpers/session';

/** Text of this many characters, each three bytes in UTF-8 (the most a character of the BMP takes). */
const longest = (length: number) => '€'.repeat(length);
const bytesOf = (body: unknown) => Buffer.byteLength(JSON.stringify(body));

/** A body the OpenAPI schema allows is never refused for its size (docs/api/newsletters.md, "Campaigns"). */
describe('Campaign and newsletter template bodies at the longest the schema allows', () => {
  let t: TestApp;
  let user: Session;
  let appId: string;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await resetDatabase(t.connection);
    ({ user } = await createSessions(t));
    appId = (await seedApp(t)).id;
  });

  it('creates and updates a campaign whose every field is at its longest', async () => {
    const body = {
      name: longest(CAMPAIGN_NAME_MAX),
      subject: longest(CAMPAIGN_SUBJECT_MAX),
      htmlContent: longest(CAMPAIGN_CONTENT_MAX),
      textContent: longest(CAMPAIGN_CONTENT_MAX),
    };
    expect(bytesOf(body)).toBeGreaterThan(64 * 1024);
    expect(bytesOf(body)).toBeLessThanOrEqual(CONTENT_BODY_BYTES);
    const created = await user.http.post(`/admin/${appId}/newsletter/campaigns`, body);
    expect({ status: created.status, error: created.body.error }).toEqual({ status: 201, error: undefined });
    const id = created.body.data._id as string;
    const updated = await user.http.patch(`/admin/${appId}/newsletter/campaigns/${id}`, body);
    expect(updated.status).toBe(200);
    expect(updated.body.data.textContent).toHaveLength(CAMPAIGN_CONTENT_MAX);
  });

  it('creates and updates a newsletter template whose every field is at its longest', async () => {
    const body = {
      name: longest(TEMPLATE_NAME_MAX),
      subject: longest(TEMPLATE_SUBJECT_MAX),
      htmlContent: longest(TEMPLATE_CONTENT_MAX),
      textContent: longest(TEMPLATE_CONTENT_MAX),
    };
    expect(bytesOf(body)).toBeGreaterThan(64 * 1024);
    const created = await user.http.post(`/admin/${appId}/newsletter/templates`, body);
    expect({ status: created.status, error: created.body.error }).toEqual({ status: 201, error: undefined });
    const id = created.body.data._id as string;
    expect((await user.http.patch(`/admin/${appId}/newsletter/templates/${id}`, body)).status).toBe(200);
  });

  it('still answers a larger body 413 with the envelope', async () => {
    const res = await user.http.post(`/admin/${appId}/newsletter/campaigns`, {
      name: 'Too big',
      subject: 'x',
      htmlContent: 'x'.repeat(CONTENT_BODY_BYTES),
    });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ success: false, error: expect.any(String) });
  });
});

import { getModelToken } from '@nestjs/mongoose';
import { randomBytes } from 'node:crypto';
import { type Model, Types } from 'mongoose';
import { ApiKeysService } from '../../src/api-keys/api-keys.service';
import type { CreateApiKeyDto } from '../../src/api-keys/dto/api-key-input.dto';
import { App } from '../../src/apps/schemas/app.schema';
import { CredentialChanges } from '../../src/common/credentials/credential-changes';
import type { TestApp } from './app';

let appCounter = 0;

/** Seeds an app record directly (for tests of other groups that only need an app to exist). */
export async function seedApp(t: TestApp, overrides: Partial<App> = {}): Promise<App> {
  appCounter += 1;
  const apps = t.app.get<Model<App>>(getModelToken(App.name));
  const created = await apps.create({
    id: `app-${appCounter}-${randomBytes(3).toString('hex')}`,
    name: `App ${appCounter}`,
    publicKey: `pk_${randomBytes(24).toString('hex')}`,
    ...overrides,
  });
  // Tests reuse app ids after resetting the database: drop what the app caches hold, as a service write does.
  await t.app.get(CredentialChanges).announce('apps');
  return created.toObject();
}

/** Creates an API key of an existing app through the service (hashed and encrypted as in production). */
export async function seedApiKey(
  t: TestApp,
  appId: string,
  overrides: Partial<Omit<CreateApiKeyDto, 'appId'>> = {},
): Promise<{ id: string; value: string }> {
  const { key, value } = await t.app
    .get(ApiKeysService)
    .create({ appId, name: 'Test key', ...overrides }, 'test-user');
  return { id: String(key._id), value };
}

/**
 * A person record as stored, with an active subscription to `appId` and `blog` consent: for tests that write
 * the `contacts` collection directly (an audience of thousands, or an address no route would accept).
 */
export function subscriberDocument(
  appId: string,
  email: string,
  firstName: string | null = null,
  now = new Date(),
) {
  return {
    _id: new Types.ObjectId(),
    email,
    firstName,
    lastName: null,
    locale: null,
    tags: [],
    consent: { outreach: null, commercial: null, blog: true },
    consentHistory: [],
    subscriptions: [
      {
        appId,
        status: 'active',
        source: 'import',
        referralUrl: null,
        subscribedAt: now,
        unsubscribedAt: null,
      },
    ],
    deletedAt: null,
    revision: 0,
    createdAt: now,
    updatedAt: now,
  };
}

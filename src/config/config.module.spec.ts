import { ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deriveKey } from '../common/crypto/derive-key';
import { AppConfigModule } from './config.module';
import type { AppConfig } from './env';
import { SecretKeys } from './secret-keys';

/** AppConfigModule in a directory of its own, with a `.env` file there and the given process environment. */
async function configIn(dotEnv: string, environment: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'config-spec-'));
  writeFileSync(join(dir, '.env'), dotEnv);
  const savedCwd = process.cwd();
  const savedEnv = { ...process.env };
  process.chdir(dir);
  process.env = { ...environment, DATA_DIR: join(dir, 'data') };
  try {
    const moduleRef = await Test.createTestingModule({
      imports: [await AppConfigModule.forRoot()],
    }).compile();
    return {
      config: moduleRef.get<ConfigService<AppConfig, true>>(ConfigService),
      keys: moduleRef.get(SecretKeys),
    };
  } finally {
    process.chdir(savedCwd);
    process.env = savedEnv;
  }
}

const secret = 'a-secret-of-at-least-thirty-two-characters';

describe('AppConfigModule', () => {
  it('reads .env, lets the process environment win, and types the values', async () => {
    const { config } = await configIn(
      'PORT=4100\nMAIL_FROM=Dot Env <a@b.test>\nEMAIL_WORKER_ENABLED=false\n',
      {
        APP_SECRET: secret,
        MAIL_FROM: 'Process <p@b.test>',
      },
    );
    expect(config.get('PORT', { infer: true })).toBe(4100);
    expect(config.get('MAIL_FROM', { infer: true })).toBe('Process <p@b.test>');
    expect(config.get('EMAIL_WORKER_ENABLED', { infer: true })).toBe(false);
    expect(config.get('publicBaseUrl', { infer: true })).toBe('http://localhost:4100');
  });

  it('derives the per-purpose keys from APP_SECRET once', async () => {
    const { keys } = await configIn('', { APP_SECRET: secret });
    expect(keys.jwt.export().equals(deriveKey(secret, 'jwt'))).toBe(true);
    expect(keys.apiKeyEncryption.equals(deriveKey(secret, 'api-key-encryption'))).toBe(true);
    const all = [
      keys.jwt.export(),
      keys.endUserJwt.export(),
      keys.apiKeyEncryption,
      keys.linkToken,
      keys.magicLink,
    ];
    expect(new Set(all.map((key) => key.toString('hex'))).size).toBe(all.length);
  });

  it('stops with a message naming the bad variable, also when it comes from .env', async () => {
    await expect(configIn('PORT=eighty\n', { APP_SECRET: secret })).rejects.toThrow(/PORT:/);
    await expect(configIn('', { NODE_ENV: 'production' })).rejects.toThrow(/APP_SECRET: is required/);
  });
});

import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidEnvironmentError, validateEnv } from './env';

const secret = 'x'.repeat(32);

describe('validateEnv', () => {
  it('applies the contract defaults', () => {
    const env = validateEnv({ APP_SECRET: secret });
    expect(env).toMatchObject({
      PORT: 3000,
      HOST: '0.0.0.0',
      DATA_DIR: '.data',
      JWT_EXPIRES_IN: '1h',
      MAIL_FROM: 'Admin Service <no-reply@localhost>',
      EMAIL_WORKER_INTERVAL_MS: 1000,
      EMAIL_WORKER_ENABLED: true,
      CHAT_WORKER_ENABLED: true,
      CHAT_WORKER_INTERVAL_MS: 2000,
      CHAT_DIGEST_CRON: '0 8 * * *',
      EMAIL_JOB_RETENTION_DAYS: 30,
      EMAIL_MESSAGE_RETENTION_DAYS: 180,
      EMAIL_EVENTS_RETENTION_DAYS: 400,
      CHAT_NOTIFICATION_RETENTION_DAYS: 30,
    });
    expect(env.publicBaseUrl).toBe('http://localhost:3000');
  });

  it('converts numbers and booleans', () => {
    const env = validateEnv({ APP_SECRET: secret, PORT: '8080', EMAIL_WORKER_ENABLED: 'false' });
    expect(env.PORT).toBe(8080);
    expect(env.EMAIL_WORKER_ENABLED).toBe(false);
    expect(env.publicBaseUrl).toBe('http://localhost:8080');
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['MONGODB_URI', 'postgres://x'],
    ['JWT_EXPIRES_IN', 'forever'],
    ['SMTP_URL', 'http://mail'],
    ['EMAIL_WORKER_ENABLED', 'maybe'],
    ['WEBHOOK_SECRET', 'plain'],
    ['APP_SECRET', 'short'],
    ['LOG_LEVEL', 'loud'],
    ['LOG_FORMAT', 'colour'],
    ['CHAT_DIGEST_CRON', 'daily'],
    ['CHAT_DIGEST_CRON', '0 25 * * *'],
    ['CHAT_WORKER_INTERVAL_MS', '10'],
    ['CHAT_DEFAULT_WEBHOOK_URL', 'ftp://chat.example.com/hook'],
    ['REDIS_URL', 'localhost:6379'],
    ['REDIS_URL', 'http://redis:6379'],
    ['REDIS_URL', 'redis://'],
    ['REDIS_URL', 'redis://redis:6379/cache'],
    ['EMAIL_JOB_RETENTION_DAYS', '0'],
    ['EMAIL_JOB_RETENTION_DAYS', 'forever'],
    ['EMAIL_MESSAGE_RETENTION_DAYS', '0'],
    ['EMAIL_EVENTS_RETENTION_DAYS', '0'],
    ['EMAIL_EVENTS_RETENTION_DAYS', '1y'],
    ['CHAT_NOTIFICATION_RETENTION_DAYS', '1'],
  ])('stops with a message naming %s for %p', (name, value) => {
    expect(() => validateEnv({ APP_SECRET: secret, [name]: value })).toThrow(InvalidEnvironmentError);
    expect(() => validateEnv({ APP_SECRET: secret, [name]: value })).toThrow(new RegExp(`${name}:`));
  });

  it.each(['redis://127.0.0.1:6379', 'rediss://:secret@redis.internal:6380/2', 'redis://redis'])(
    'accepts REDIS_URL %p',
    (value) => {
      expect(validateEnv({ APP_SECRET: secret, REDIS_URL: value }).REDIS_URL).toBe(value);
    },
  );

  it('requires APP_SECRET in production', () => {
    expect(() => validateEnv({ NODE_ENV: 'production' })).toThrow(/APP_SECRET/);
  });

  it('generates a secret once into DATA_DIR outside production and reuses it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'env-spec-'));
    const first = validateEnv({ DATA_DIR: dir }).APP_SECRET;
    const second = validateEnv({ DATA_DIR: dir }).APP_SECRET;
    expect(first).toHaveLength(64);
    expect(second).toBe(first);
    expect(readFileSync(join(dir, 'app-secret'), 'utf8').trim()).toBe(first);
    expect(statSync(join(dir, 'app-secret')).mode & 0o777).toBe(0o600);
  });
});

describe('BCRYPT_COST', () => {
  it('defaults to 12 and accepts 4 outside production (tests)', () => {
    expect(validateEnv({ APP_SECRET: secret }).BCRYPT_COST).toBe(12);
    expect(validateEnv({ APP_SECRET: secret, BCRYPT_COST: '4' }).BCRYPT_COST).toBe(4);
  });

  it.each(['3', '15', 'twelve'])('refuses %p anywhere', (value) => {
    expect(() => validateEnv({ APP_SECRET: secret, BCRYPT_COST: value })).toThrow(/BCRYPT_COST:/);
  });

  it('refuses a cost below 10 in production and takes 10 to 14', () => {
    const production = {
      APP_SECRET: secret,
      NODE_ENV: 'production',
      MONGODB_URI: 'mongodb://db.internal:27017/admin-service',
      MAIL_FROM: 'News <news@mail.example.com>',
      PUBLIC_BASE_URL: 'https://mail.example.com',
      SMTP_URL: 'smtp://mail.internal:587',
    };
    expect(() => validateEnv({ ...production, BCRYPT_COST: '9' })).toThrow(
      /BCRYPT_COST: must be at least 10/,
    );
    expect(validateEnv({ ...production, BCRYPT_COST: '10' }).BCRYPT_COST).toBe(10);
    expect(validateEnv({ ...production, BCRYPT_COST: '14' }).BCRYPT_COST).toBe(14);
  });
});

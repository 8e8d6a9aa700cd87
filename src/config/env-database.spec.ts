import { validateEnv } from './env';
import { databaseNameOf } from './mongodb-uri';

const production = {
  NODE_ENV: 'production',
  APP_SECRET: 'x'.repeat(32),
  MAIL_FROM: 'news@mail.example.com',
  PUBLIC_BASE_URL: 'https://mail.example.com',
  SMTP_URL: 'smtp://mail.internal:587',
};

describe('MONGODB_URI at start-up', () => {
  it('is required in production: the embedded stand-in never serves a production process', () => {
    expect(() => validateEnv(production)).toThrow(/MONGODB_URI: is required when NODE_ENV=production/);
  });

  it('names both missing secrets in one message', () => {
    expect(() => validateEnv({ NODE_ENV: 'production' })).toThrow(/APP_SECRET[\s\S]*MONGODB_URI/);
  });

  it.each([
    'mongodb://db.internal:27017',
    'mongodb://db.internal:27017/',
    'mongodb://db.internal:27017/?replicaSet=rs0',
    'mongodb+srv://user:pa%2Fss@cluster0.example.net/?retryWrites=true',
  ])('is refused in production without a database name: %s', (uri) => {
    expect(() => validateEnv({ ...production, MONGODB_URI: uri })).toThrow(/MONGODB_URI: names no database/);
  });

  it('never shows the password of a refused URI', () => {
    const uri = 'mongodb://admin:hunter2-secret@db.internal:27017';
    const message = (() => {
      try {
        validateEnv({ ...production, MONGODB_URI: uri });
        return 'accepted';
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(message).toMatch(/MONGODB_URI: names no database \(db\.internal:27017\)/);
    expect(message).not.toContain('hunter2-secret');
  });

  it.each([
    ['mongodb://db.internal:27017/admin-service', 'admin-service'],
    ['mongodb://a:1,b:2/app?replicaSet=rs0', 'app'],
    ['mongodb+srv://user:secret@cluster0.example.net/prod?retryWrites=true', 'prod'],
  ])('accepts %s in production (database %s)', (uri, name) => {
    expect(validateEnv({ ...production, MONGODB_URI: uri }).MONGODB_URI).toBe(uri);
    expect(databaseNameOf(uri)).toBe(name);
  });

  it('leaves development free to omit it (the stand-in), and tests free to omit the database name', () => {
    const secret = 'x'.repeat(32);
    expect(validateEnv({ APP_SECRET: secret }).MONGODB_URI).toBeUndefined();
    const uri = 'mongodb://127.0.0.1:27017';
    expect(validateEnv({ APP_SECRET: secret, NODE_ENV: 'test', MONGODB_URI: uri }).MONGODB_URI).toBe(uri);
  });

  it('refuses a URI without a database name in development, in one line naming MONGODB_URI', () => {
    expect(() =>
      validateEnv({ APP_SECRET: 'x'.repeat(32), MONGODB_URI: 'mongodb://127.0.0.1:27017' }),
    ).toThrow(
      /^Invalid configuration: MONGODB_URI: names no database \(127\.0\.0\.1:27017\), so the driver would/,
    );
  });
});

describe('SMTP_URL in production', () => {
  const base = {
    NODE_ENV: 'production',
    APP_SECRET: 'x'.repeat(32),
    MONGODB_URI: 'mongodb://db.internal:27017/admin-service',
    MAIL_FROM: 'News <news@mail.example.com>',
    PUBLIC_BASE_URL: 'https://mail.example.com',
  };

  it('is required: one line naming SMTP_URL and how to ask for mail to files', () => {
    expect(() => validateEnv(base)).toThrow(
      /^Invalid configuration: SMTP_URL: is required when NODE_ENV=production .*EMAIL_TRANSPORT=outbox/,
    );
  });

  it.each([
    [{ SMTP_URL: 'smtp://mail.internal:587' }, undefined],
    [{ EMAIL_TRANSPORT: 'outbox' }, 'outbox'],
    [{ EMAIL_TRANSPORT: 'resend-api', RESEND_API_KEY: 're_123' }, 'resend-api'],
  ])('is not needed with %j', (settings, transport) => {
    expect(validateEnv({ ...base, ...settings }).EMAIL_TRANSPORT).toBe(transport);
  });
});

import { validateEnv } from './env';
import { databaseNameOf } from './mongodb-uri';

const production = {
  NODE_ENV: 'production',
  APP_SECRET: 'x'.repeat(32),
  MAIL_FROM: 'news@mail.example.com',
  PUBLIC_BASE_URL: 'https://mail.example.com',
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

  it('leaves development and tests free to omit it (the stand-in) or the database name', () => {
    const secret = 'x'.repeat(32);
    expect(validateEnv({ APP_SECRET: secret }).MONGODB_URI).toBeUndefined();
    expect(validateEnv({ APP_SECRET: secret, MONGODB_URI: 'mongodb://127.0.0.1:27017' }).MONGODB_URI).toBe(
      'mongodb://127.0.0.1:27017',
    );
  });
});

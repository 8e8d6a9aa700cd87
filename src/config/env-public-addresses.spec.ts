import { validateEnv } from './env';

/** A production environment that is valid but for the variable a case replaces. */
const production = {
  NODE_ENV: 'production',
  APP_SECRET: 'x'.repeat(32),
  MONGODB_URI: 'mongodb://db.internal:27017/app',
  MAIL_FROM: 'News <news@mail.example.com>',
  PUBLIC_BASE_URL: 'https://mail.example.com',
  SMTP_URL: 'smtp://mail.internal:587',
};

describe('production mail addresses', () => {
  it('starts with a From on a public domain and an https link host', () => {
    expect(validateEnv(production).MAIL_FROM).toBe('News <news@mail.example.com>');
  });

  it.each([
    ['MAIL_FROM', 'Admin Service <no-reply@localhost>', /MAIL_FROM: is on localhost/],
    ['MAIL_FROM', 'a@mail.localhost', /MAIL_FROM: is on localhost/],
    ['MAIL_FROM', 'x@[192.0.2.1]', /MAIL_FROM: is on an IP address/],
    ['MAIL_FROM', 'x@192.0.2.1', /MAIL_FROM: is on an IP address/],
    ['MAIL_FROM', 'nobody', /MAIL_FROM: is on no domain/],
    ['PUBLIC_BASE_URL', 'http://localhost:3000', /PUBLIC_BASE_URL: is on localhost/],
    ['PUBLIC_BASE_URL', 'https://127.0.0.1', /PUBLIC_BASE_URL: is on an IP address/],
    ['PUBLIC_BASE_URL', 'https://[::1]:8443', /PUBLIC_BASE_URL: is on an IP address/],
    ['PUBLIC_BASE_URL', 'http://mail.example.com', /PUBLIC_BASE_URL: is plain http/],
    ['PUBLIC_BASE_URL', '', /PUBLIC_BASE_URL: is required when NODE_ENV=production/],
  ])('refuses %s=%s in one line naming it', (name, value, message) => {
    expect(() => validateEnv({ ...production, [name]: value })).toThrow(
      new RegExp(`^Invalid configuration: ${message.source}[^\\n]*$`),
    );
  });

  it('leaves development and tests on localhost', () => {
    const env = validateEnv({ APP_SECRET: 'x'.repeat(32) });
    expect(env.MAIL_FROM).toBe('Admin Service <no-reply@localhost>');
    expect(env.publicBaseUrl).toBe('http://localhost:3000');
  });
});

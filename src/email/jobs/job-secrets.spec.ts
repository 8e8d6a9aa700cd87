import { SecretKeys } from '../../config/secret-keys';
import { JobSecrets } from './job-secrets';
import { REDACTED, redactPayload } from './job-redaction';

describe('JobSecrets', () => {
  const secrets = new JobSecrets(new SecretKeys('job-secrets-spec-secret-that-is-long-enough'));
  const token = 'UJKKwTHYpIhKsgCGMqWktpOuqG6AbwZD6zQb97yRtCQ';

  it('seals secrets into a value that does not contain them and opens it again', () => {
    const sealed = secrets.seal({ token });
    expect(sealed).toMatch(/^v1\./);
    expect(sealed).not.toContain(token);
    expect(secrets.open(sealed)).toEqual({ token });
  });

  it('opens nothing that was altered, sealed with another key, or is not a sealed value', () => {
    const sealed = secrets.seal({ token });
    const other = new JobSecrets(new SecretKeys('another-job-secrets-spec-secret-long-enough'));
    expect(other.open(sealed)).toBeNull();
    // A bit of the ciphertext's first byte flipped (the last two characters set to "AA" left the bytes as
    // they were once in 256 runs: when the last byte was already 0).
    const parts = sealed.split('.');
    const last = Buffer.from(parts[parts.length - 1], 'base64url');
    last[0] ^= 1;
    const altered = [...parts.slice(0, -1), last.toString('base64url')].join('.');
    expect(secrets.open(altered)).toBeNull();
    for (const value of [undefined, null, 42, '', 'garbage', token]) expect(secrets.open(value)).toBeNull();
  });
});

describe('redactPayload', () => {
  it('redacts sealed secrets, bodies and unsubscribe links, also in variables and a plan message', () => {
    const payload = {
      to: 'ada@example.com',
      subject: 'Welcome',
      html: '<a href="https://x.test/u/t">u</a>',
      text: 'https://x.test/u/t',
      sealed: 'v1.a.b.c',
      unsubscribeUrl: 'https://x.test/u/t',
      variables: { firstName: 'Ada', unsubscribeUrl: 'https://x.test/u/t' },
      message: { html: '<p>hi</p>', subject: 'Plan', variables: { unsubscribeUrl: 'https://x.test/u/t' } },
    };
    expect(redactPayload(payload)).toEqual({
      to: 'ada@example.com',
      subject: 'Welcome',
      html: REDACTED,
      text: REDACTED,
      sealed: REDACTED,
      unsubscribeUrl: REDACTED,
      variables: { firstName: 'Ada', unsubscribeUrl: REDACTED },
      message: { html: REDACTED, subject: 'Plan', variables: { unsubscribeUrl: REDACTED } },
    });
    expect(payload.html).toContain('href');
  });
});

import type { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../../config/env';
import { SecretKeys } from '../../config/secret-keys';
import { VerpAddresses } from './verp';

const config = (bounceDomain?: string) =>
  ({ get: () => bounceDomain }) as unknown as ConfigService<AppConfig, true>;
const JOB = '65a0000000000000000000ff';

describe('VerpAddresses', () => {
  const keys = new SecretKeys('a master secret of sufficient length for tests');
  const verp = new VerpAddresses(keys, config('Bounces.Example.com'));

  it('names the job, signed, on BOUNCE_DOMAIN or the return-path host', () => {
    const address = verp.envelopeFor(JOB, undefined)!;
    expect(address).toMatch(new RegExp(`^b\\+${JOB}\\.[0-9a-f]{20}@bounces\\.example\\.com$`));
    expect(verp.envelopeFor(JOB, 'bounces@rp.shop.example')).toMatch(/@rp\.shop\.example$/);
    expect(verp.jobOf(address)).toBe(JOB);
    expect(verp.jobOf(address.toUpperCase())).toBe(JOB);
  });

  it('refuses another key, a tampered id or signature, and other addresses', () => {
    const address = verp.envelopeFor(JOB, undefined)!;
    const other = new VerpAddresses(
      new SecretKeys('another master secret, also long enough'),
      config('x.example'),
    );
    expect(other.jobOf(address)).toBeNull();
    expect(verp.jobOf(address.replace(JOB, JOB.replace(/f$/, 'e')))).toBeNull();
    expect(verp.jobOf('bounces@bounces.example.com')).toBeNull();
    expect(verp.jobOf('b+nothex.0123@bounces.example.com')).toBeNull();
  });

  it('leaves the envelope as it was without BOUNCE_DOMAIN', () => {
    const off = new VerpAddresses(keys, config(undefined));
    expect(off.envelopeFor(JOB, undefined)).toBeUndefined();
    expect(off.envelopeFor(JOB, 'bounces@rp.shop.example')).toBe('bounces@rp.shop.example');
  });
});

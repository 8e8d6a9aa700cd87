import { SecretKeys } from '../../config/secret-keys';
import { LinkTokens, MAX_LINK_TOKEN_LENGTH } from './link-token';

describe('LinkTokens', () => {
  const tokens = new LinkTokens(new SecretKeys('a-master-secret-of-at-least-32-characters!!'));

  it('verifies its own token and returns the fields in order', () => {
    const token = tokens.sign('unsubscribe', ['64b0c0ffee', 'app-one']);
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(tokens.verify('unsubscribe', token)).toEqual(['64b0c0ffee', 'app-one']);
  });

  it('refuses a token of another purpose', () => {
    const open = tokens.sign('open', ['m1', 'p1']);
    expect(tokens.verify('unsubscribe', open)).toBeNull();
    expect(tokens.verify('click', open)).toBeNull();
  });

  it('refuses a token signed with another secret', () => {
    const foreign = new LinkTokens(new SecretKeys('another-master-secret-of-32-characters!!!')).sign(
      'unsubscribe',
      ['p', 'a'],
    );
    expect(tokens.verify('unsubscribe', foreign)).toBeNull();
  });

  it('refuses altered payloads and MACs, malformed and oversized tokens', () => {
    const token = tokens.sign('unsubscribe', ['p', 'a']);
    const [payload, mac] = token.split('.');
    const otherPayload = Buffer.from(JSON.stringify(['unsubscribe', 'q', 'a'])).toString('base64url');
    expect(tokens.verify('unsubscribe', `${otherPayload}.${mac}`)).toBeNull();
    // A bit flipped, not the last characters replaced: those may already hold what replaces them.
    const alteredMac = Buffer.from(mac, 'base64url');
    alteredMac[0] ^= 1;
    expect(tokens.verify('unsubscribe', `${payload}.${alteredMac.toString('base64url')}`)).toBeNull();
    expect(tokens.verify('unsubscribe', payload)).toBeNull();
    expect(tokens.verify('unsubscribe', `${token}.x`)).toBeNull();
    expect(tokens.verify('unsubscribe', 'x'.repeat(MAX_LINK_TOKEN_LENGTH + 1))).toBeNull();
    expect(tokens.verify('unsubscribe', '')).toBeNull();
  });

  it('accepts exactly one spelling of a MAC: no padding, no stray characters, canonical last character', () => {
    const token = tokens.sign('click', ['c', 'p', 'a', '0']);
    const [payload, mac] = token.split('.');
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(mac[mac.length - 1]);
    // 22 characters carry 132 bits for 128: the last character's 4 low bits are unused.
    const sameBytes = [...alphabet].filter((_, i) => i >> 4 === last >> 4);
    expect(sameBytes).toHaveLength(16);
    const accepted = sameBytes.filter((char) =>
      tokens.verify('click', `${payload}.${mac.slice(0, -1)}${char}`),
    );
    expect(accepted).toEqual([mac[mac.length - 1]]);
    for (const suffix of ['=', '==', '!!', ' ', '\n', '+', '/']) {
      expect(tokens.verify('click', `${token}${suffix}`)).toBeNull();
    }
    expect(tokens.verify('click', `${payload}.${mac.slice(0, 10)}=${mac.slice(10)}`)).toBeNull();
    expect(tokens.verify('click', token)).toEqual(['c', 'p', 'a', '0']);
  });

  describe('sealed tokens', () => {
    it('open to their fields, say nothing readable, and differ each time', () => {
      const fields = ['665f1c0a9d3e4b2a1c0d9e8f', 'app-one', 'signup-1'];
      const first = tokens.seal('unsubscribe', fields);
      const second = tokens.seal('unsubscribe', fields);
      expect(first).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(first).not.toBe(second);
      expect(Buffer.from(first, 'base64url').toString('latin1')).not.toContain('app-one');
      expect(tokens.open('unsubscribe', first)).toEqual(fields);
      expect(tokens.verify('unsubscribe', first)).toBeNull();
    });

    it('refuse another purpose, another secret, an altered byte and a signed token', () => {
      const sealed = tokens.seal('unsubscribe', ['p', 'a', 's']);
      expect(tokens.open('click', sealed)).toBeNull();
      const foreign = new LinkTokens(new SecretKeys('another-master-secret-of-32-characters!!!'));
      expect(foreign.open('unsubscribe', sealed)).toBeNull();
      const bytes = Buffer.from(sealed, 'base64url');
      bytes[bytes.length - 1] ^= 1;
      expect(tokens.open('unsubscribe', bytes.toString('base64url'))).toBeNull();
      expect(tokens.open('unsubscribe', tokens.sign('unsubscribe', ['p', 'a']))).toBeNull();
      expect(tokens.open('unsubscribe', 'AAAA')).toBeNull();
    });
  });
});

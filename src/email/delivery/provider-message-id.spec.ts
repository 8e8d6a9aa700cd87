import { providerMessageIdOf } from './provider-message-id';

describe('providerMessageIdOf', () => {
  it.each([
    ['250 Ok: queued as Y4bFNYz0QJ-7eHxlcKm9fA', 'Y4bFNYz0QJ-7eHxlcKm9fA'],
    // URL-safe base64 (SendGrid's X-Message-Id) may begin with either of its two signs.
    ['250 Ok: queued as _RQnILgO1MeIvafhdDFVcw', '_RQnILgO1MeIvafhdDFVcw'],
    ['250 Ok: queued as -RQnILgO1MeIvafhdDFVcw', '-RQnILgO1MeIvafhdDFVcw'],
    [
      '250 Ok 0100018a-2b3c4d5e-6f70-4a1b-9c2d-3e4f5a6b7c8d-000000',
      '0100018a-2b3c4d5e-6f70-4a1b-9c2d-3e4f5a6b7c8d-000000',
    ],
  ])('reads the id of %s', (response, id) => {
    expect(providerMessageIdOf(response)).toBe(id);
  });

  it.each(['250 2.0.0 OK', '250 Ok: queued as', '550 Ok: queued as abcdefgh', 42])(
    'finds none in %p',
    (answer) => {
      expect(providerMessageIdOf(answer)).toBeNull();
    },
  );
});

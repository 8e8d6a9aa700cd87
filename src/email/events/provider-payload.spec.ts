import { readProviderPayload } from './provider-payload';

const now = new Date('2026-11-23T12:00:00.000Z');
const read = (payload: unknown) => readProviderPayload(payload, now);

describe('readProviderPayload', () => {
  it.each([
    ['email.sent', 'sent'],
    ['email.delivered', 'delivered'],
    ['email.delivery_delayed', 'delivery_delayed'],
    ['email.bounced', 'bounced'],
    ['email.complained', 'complained'],
    ['email.opened', 'opened'],
    ['email.clicked', 'clicked'],
  ])('maps %s to %s', (type, expected) => {
    const result = read({ type, created_at: '2026-11-23T11:59:00.000Z', data: { email_id: 'm@x.test' } });
    expect(result).toMatchObject({ event: { type: expected, messageId: 'm@x.test' } });
    if ('event' in result) expect(result.event.occurredAt.toISOString()).toBe('2026-11-23T11:59:00.000Z');
  });

  it.each([
    ['an unknown type', { type: 'email.scheduled', data: { email_id: 'm' } }],
    ['no data.email_id', { type: 'email.delivered', data: {} }],
    ['an array', [1]],
    ['a string', 'email.delivered'],
  ])('ignores %s', (_label, payload) => {
    expect(read(payload)).toEqual({ ignored: expect.any(String) as string });
  });

  it('takes a bounce as hard unless the provider says transient', () => {
    const bounce = (bounce?: unknown) => read({ type: 'email.bounced', data: { email_id: 'm', bounce } });
    expect(bounce()).toMatchObject({ event: { bounceType: 'hard' } });
    expect(bounce({ type: 'Permanent' })).toMatchObject({ event: { bounceType: 'hard' } });
    expect(bounce({ type: 'Transient' })).toMatchObject({ event: { bounceType: 'soft' } });
  });

  it('takes a missing, malformed or far-future time as the time received', () => {
    const at = (created_at: unknown) => {
      const result = read({ type: 'email.sent', created_at, data: { email_id: 'm' } });
      return 'event' in result ? result.event.occurredAt.getTime() : null;
    };
    expect(at(undefined)).toBe(now.getTime());
    expect(at('yesterday-ish')).toBe(now.getTime());
    expect(at('2027-01-01T00:00:00Z')).toBe(now.getTime());
  });

  it('keeps only http(s) click links and marks a scanner’s click automated', () => {
    const click = (link: string, userAgent: string) =>
      read({ type: 'email.clicked', data: { email_id: 'm', click: { link, userAgent } } });
    expect(click('https://a.example/x', 'Mozilla/5.0 (X11) Firefox/120')).toMatchObject({
      event: { url: 'https://a.example/x', automated: false },
    });
    const scripted = click('javascript:alert(1)', 'python-requests/2.31');
    expect(scripted).toMatchObject({ event: { automated: true } });
    expect('event' in scripted && scripted.event.url).toBeFalsy();
  });
});

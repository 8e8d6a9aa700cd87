import { blockingCause, causesOf } from './suppression-policy';

const cause = { source: 'test', appId: null, at: new Date(0) };

describe('suppression policy', () => {
  it('a hard bounce stops every stream; the other causes stop broadcasts only', () => {
    expect(blockingCause({ hard_bounce: cause }, 'transactional')).toBe('hard_bounce');
    for (const reason of ['complaint', 'opt_out', 'soft_bounce'] as const) {
      expect(blockingCause({ [reason]: cause }, 'broadcast')).toBe(reason);
      expect(blockingCause({ [reason]: cause }, 'transactional')).toBeNull();
    }
    expect(blockingCause({ soft_bounce: cause, complaint: cause }, 'broadcast')).toBe('complaint');
  });

  it('reads an entry stored before causes were kept apart as its one reason', () => {
    const at = new Date('2026-01-01');
    expect(causesOf({ reason: 'complaint', source: 'webhook', appId: 'shop', updatedAt: at })).toEqual({
      complaint: { source: 'webhook', appId: 'shop', at },
    });
    expect(causesOf({ causes: { opt_out: cause }, updatedAt: at })).toEqual({ opt_out: cause });
  });
});

import type { Logger } from '@nestjs/common';
import { Circuit, DependencyUnavailableError } from './circuit';

describe('Circuit', () => {
  const logger = { warn: jest.fn(), log: jest.fn() };
  const circuit = () =>
    new Circuit(() => ({ firstProbeMs: 100, maxProbeMs: 400 }), logger as unknown as Logger);
  const down = new DependencyUnavailableError('SMTP server', new Error('connect ECONNREFUSED'));
  beforeEach(() => jest.clearAllMocks());

  it('opens on an unavailable dependency, probes after growing waits, and closes once reached', () => {
    const c = circuit();
    expect(c.mode(0)).toBe('closed');
    c.unavailable(down, 0);
    // Attempts already under way when it opened change nothing.
    c.unavailable(down, 10);
    expect([c.mode(99), c.mode(100)]).toEqual(['open', 'probe']);
    const probes = [100];
    for (let i = 0; i < 4; i += 1) {
      c.unavailable(down, probes[i]);
      probes.push(c.nextProbeAt.getTime());
    }
    expect(probes).toEqual([100, 300, 700, 1_100, 1_500]);
    c.reached(1_600);
    expect(c.mode(1_600)).toBe('closed');
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.log).toHaveBeenCalledTimes(1);
    expect(logger.log).toHaveBeenCalledWith(
      expect.stringMatching(/SMTP server reachable again after 1\.6 s/),
    );
  });

  it('starts from the first wait again after closing', () => {
    const c = circuit();
    c.unavailable(down, 0);
    c.unavailable(down, 100);
    c.reached(200);
    c.unavailable(down, 1_000);
    expect(c.nextProbeAt.getTime()).toBe(1_100);
  });
});

import { stdTimeFunctions } from 'pino';
import { isoTime } from './log-stream';

describe('isoTime', () => {
  afterEach(() => jest.useRealTimers());

  it("writes pino's isoTime field, formatted again only when the millisecond changes", () => {
    jest.useFakeTimers({ now: new Date('2026-11-24T08:00:00.123Z') });
    expect(isoTime()).toBe(stdTimeFunctions.isoTime());
    expect(isoTime()).toBe(',"time":"2026-11-24T08:00:00.123Z"');
    jest.setSystemTime(new Date('2026-11-24T08:00:00.124Z'));
    expect(isoTime()).toBe(',"time":"2026-11-24T08:00:00.124Z"');
    expect(isoTime()).toBe(stdTimeFunctions.isoTime());
  });
});

import { looksAutomated } from './automated';

describe('looksAutomated', () => {
  it.each([
    [null, true],
    ['', true],
    ['Mozilla/5.0', true],
    ['Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)', true],
    ['Mozilla/5.0 (compatible; Barracuda Sentinel)', true],
    ['python-requests/2.31', true],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)', false],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) Thunderbird/128.0', false],
  ])('%p → %p', (agent, expected) => {
    expect(looksAutomated(agent)).toBe(expected);
  });
});

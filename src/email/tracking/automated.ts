/**
 * Whether a tracking request looks like a machine rather than the person (pure, deliberately simple; the
 * analytics issue decides how to count). Opens: mail-privacy proxies fetch every image of every mail
 * (Apple Mail Privacy Protection sends a bare `Mozilla/5.0`, Google and Yahoo name their image proxies).
 * Both: an empty user agent, security link scanners and HTTP libraries.
 */
const PRIVACY_PROXIES = /GoogleImageProxy|ggpht\.com|YahooMailProxy|^Mozilla\/5\.0$/i;
const SCANNERS =
  /bot\b|crawler|spider|scanner|Barracuda|Mimecast|Proofpoint|urldefense|Symantec|Forcepoint|curl\/|wget|python-requests|Go-http-client|HeadlessChrome|preview/i;

export const USER_AGENT_MAX = 512;

export function looksAutomated(userAgent: string | null): boolean {
  const agent = userAgent?.trim() ?? '';
  return agent.length === 0 || PRIVACY_PROXIES.test(agent) || SCANNERS.test(agent);
}

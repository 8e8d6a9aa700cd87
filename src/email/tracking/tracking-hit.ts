import { looksAutomated, USER_AGENT_MAX } from './automated';
import { campaignMessageId, type OpenTarget } from './tracking-links';
import type { TrackingEvent } from './tracking-events';

/**
 * The event an open or a click records: the message its token names, the user agent (cut to a bounded
 * length), whether the request looks automated (counted apart by analytics) and when it came.
 */
export function trackingEvent(
  target: OpenTarget,
  type: 'opened' | 'clicked',
  userAgent: string | undefined,
  at: Date,
  click: { linkIndex?: number; url?: string } = {},
): TrackingEvent {
  const agent = typeof userAgent === 'string' ? userAgent.slice(0, USER_AGENT_MAX) : null;
  return {
    appId: target.appId,
    contactId: target.contactId,
    messageId: campaignMessageId(target.campaignId, target.contactId),
    campaignId: target.campaignId,
    provider: 'tracking',
    type,
    ...click,
    userAgent: agent,
    automated: looksAutomated(agent),
    createdAt: at,
  };
}

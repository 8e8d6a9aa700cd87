import type { AllowListEntry } from './index-coverage';

/**
 * Query shapes no index serves, on purpose, each with why reading them without one is acceptable
 * (docs/operations/index-coverage.md). Keep it short: an entry belongs here only when what is read stays
 * bounded (a small collection, one app's records, a page walked in index order), never on a path every
 * request takes.
 */
/** What the ticket lists filter while walking an index: searches (patterns) and few-valued fields. */
const TICKET_LIST_FILTERS = ['subject', 'message', 'email', 'topic', 'priority', 'messages.content'];

export const INDEX_COVERAGE_ALLOW_LIST: AllowListEntry[] = [
  {
    collection: 'users',
    wholeCollection: true,
    reason: 'back-office accounts: tens of documents; the lists and the last-admin check read them all',
  },
  {
    collection: 'api_keys',
    wholeCollection: true,
    reason:
      'a few keys per app (hundreds in all): the admin list across apps and its statistics read them all',
  },
  {
    collection: 'email_templates',
    filteredFields: ['language', 'name', 'subject'],
    reason:
      'one scope’s templates (tens): the search is a case-insensitive pattern and language one of a few; ' +
      'filtered while walking the scope’s by-name index',
  },
  {
    collection: 'apps',
    wholeCollection: true,
    reason: 'one document per client application (tens to hundreds); the admin list reads them all by name',
  },
  ...['eq(isActive)', 'scan(name)', 'scan(description)'].map((filter) => ({
    shape: `api_keys countDocuments ${filter}`,
    reason: 'the admin key list’s total across apps: a few keys per app (hundreds in all), read whole',
  })),
  ...['sort(createdAt:-1,_id:-1)', 'range(resolvedAt) mayBeMissing(resolvedAt)'].map((stage) => ({
    shape: `tickets aggregate-stage ${stage}`,
    reason:
      'ticket statistics (`$facet` branches: the latest few, the resolution time) over the tickets the ' +
      'first stage selected by index: one app’s, or one shop’s, within the requested period',
  })),
  {
    collection: 'contacts',
    countedOutsideIndex: ['email', 'firstName', 'lastName', 'consent.*', 'subscriptions.status'],
    reason:
      'the total of a filtered contact or subscriber list: reads every live contact the index selects (all, ' +
      'one tag’s, one app’s subscribers; `$elemMatch` checks each document) to apply the search and consent ' +
      'filters; bounded by the list routes’ count cap where one applies (docs/operations/index-coverage.md)',
  },
  {
    shape: 'contacts aggregate-stage eq(subscriptions.appId)',
    reason:
      'subscriber statistics: after `$unwind`, keeps that app’s entry of each subscriber the first stage ' +
      'selected by index; a contact has one subscription per app, so the input is those subscribers',
  },
  {
    collection: 'email_events',
    countedOutsideIndex: ['type', 'provider', 'stream'],
    reason:
      'the event list’s total with a type, provider or stream filter: reads the events its leading filter ' +
      'selects (one person’s, message’s, campaign’s or app’s) to check them; stream only within a person ' +
      'or a message (otherwise its own indexes count it, or it is refused)',
  },
  {
    collection: 'email_templates',
    countedOutsideIndex: ['language', 'name', 'subject'],
    reason: 'one scope’s template list total (tens of templates), filtered while reading them',
  },
  {
    collection: 'tickets',
    countedOutsideIndex: TICKET_LIST_FILTERS,
    reason:
      'the total of one app’s filtered ticket list: reads the app’s tickets the index selects to apply the ' +
      'search (a case-insensitive pattern), topic and priority',
  },
  {
    collection: 'contacts',
    filteredFields: ['email', 'firstName', 'lastName', 'consent.*'],
    reason:
      'admin and subscriber lists: the search is a case-insensitive pattern no index bounds, and a consent ' +
      'category asked together with a tag is checked on each of the tag’s contacts; filtered while the list ' +
      'walks its newest-first index a page at a time (the count stops at 10,000 matches, and the request ' +
      'time limit stops a search that finds few)',
  },
  {
    collection: 'contacts',
    filteredFields: [
      'subscriptions.source',
      'locale',
      'subscriptions.subscribedAt',
      'subscriptions.droppedTopics',
    ],
    reason:
      'segment and topic filters (SegmentMembers): trailing fields of the audience index, checked on its ' +
      'keys while the walk goes through one app’s subscribers in `_id` order, a batch at a time (any ' +
      'combination of them may be given, so they cannot all lead the range part)',
  },
  {
    collection: 'email_jobs',
    filteredFields: ['status', 'type'],
    reason:
      'admin job list and a recipient’s jobs: status and type take a handful of values each, filtered while ' +
      'the list walks the newest-first index of its campaign, of all jobs, or of the recipient',
  },
  {
    collection: 'email_jobs',
    countedOutsideIndex: ['type'],
    reason:
      'a campaign’s jobs of one type (its messages or its plan jobs): counted over the campaign’s keys of ' +
      'its `{campaignId, status, type}` index, a few values of type each',
  },
  {
    collection: 'email_jobs',
    filteredFields: ['campaignId', 'type'],
    reason:
      'the stream backfill at a worker’s first run (EmailJobStore.backfillStreams): the jobs without a ' +
      'stream through the `{stream, createdAt}` index (none once done; every old job once, after the ' +
      'upgrade), campaign and type checked on each',
  },
  {
    collection: 'email_events',
    filteredFields: ['type', 'bounceType'],
    reason:
      'the soft-bounce rule (SoftBounceRule): the events of an address’s last few messages (its messageId ' +
      'index), filtered to soft bounces while walking them (a handful per message)',
  },
  {
    collection: 'email_events',
    filteredFields: ['type', 'provider', 'stream'],
    reason:
      'event list: the first filter of EMAIL_EVENT_FILTER_ORDER leads its index; type, provider and stream ' +
      'are filtered while walking one message’s or one person’s events (a handful); within a campaign or an ' +
      'app type has indexes of its own, stream has one within an app, and provider is refused there',
  },
  {
    collection: 'tickets',
    filteredFields: TICKET_LIST_FILTERS,
    reason:
      'one app’s ticket list: the search is a case-insensitive pattern, topic and priority a few values; ' +
      'filtered while walking the app’s newest-first index a page at a time',
  },
  {
    collection: 'tickets',
    sortedInMemory: ['priorityRank', 'statusRank', 'subject', 'updatedAt'],
    alsoFiltered: TICKET_LIST_FILTERS,
    reason:
      'alternative sorts of one app’s admin ticket list: sorted over that app’s selected tickets only (a ' +
      'search among them filtered on the way)',
  },
  ...['subject', 'message', 'email'].map((field) => ({
    shape: `tickets countDocuments scan(${field})`,
    reason:
      'the total of a staff search across every app’s tickets: a case-insensitive pattern no index bounds, ' +
      'so the count reads each ticket once (staff only, one count per search; the page itself walks the ' +
      'newest-first index)',
  })),
  {
    collection: 'feedback',
    sortedInMemory: ['type', 'status', 'priority', 'updatedAt'],
    reason:
      'alternative sorts of one app’s admin feedback list: sorted over that app’s selected records only',
  },
  {
    collection: 'wants',
    filteredFields: ['category', 'status'],
    reason:
      'one app’s wants by age: category and status (a few values) filtered while walking the app’s ' +
      'oldest/newest-first index',
  },
  {
    collection: 'audit_records',
    filteredFields: ['action'],
    reason:
      'the audit log of one actor, target or app and one action: that filter’s newest-first index is ' +
      'walked and the action checked on each record (admins only, a page at a time)',
  },
  {
    collection: 'audit_records',
    countedOutsideIndex: ['action'],
    reason:
      'the total of an audit log page of one actor, target or app and one action: reads the records that ' +
      'filter’s index selects to check the action; bounded by the count cap',
  },
];

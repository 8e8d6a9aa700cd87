import type { FeedbackType } from '../feedback/schemas/feedback.schema';
import type { TicketPriority, TicketTopic } from '../tickets/schemas/ticket.schema';

/**
 * What `npm run seed:demo` writes, fixed by index: every run derives the same names, addresses and texts,
 * so a second run finds what the first created instead of adding look-alikes.
 */

export interface DemoApp {
  id: string;
  name: string;
  description: string;
  /** How many people subscribe to its newsletter. */
  subscribers: number;
  tickets: number;
}

export const DEMO_APPS: readonly DemoApp[] = [
  {
    id: 'demo-shop',
    name: 'Demo Shop',
    description: 'A small online shop: orders, support tickets and a monthly newsletter',
    subscribers: 240,
    tickets: 90,
  },
  {
    id: 'demo-blog',
    name: 'Demo Blog',
    description: 'A cooking blog with a weekly recipe letter and a feature wish list',
    subscribers: 120,
    tickets: 30,
  },
];

export const DEMO_KEY_NAME = 'Demo backend';

const FIRST_NAMES = [
  'Ana',
  'Ben',
  'Chloé',
  'David',
  'Elena',
  'Farid',
  'Greta',
  'Hugo',
  'Ines',
  'Jonas',
  'Kira',
  'Luis',
  'Maya',
  'Noah',
  'Olga',
  'Pablo',
  'Quinn',
  'Rosa',
  'Sami',
  'Tara',
  'Umar',
  'Vera',
  'Wim',
  'Yara',
  'Zoe',
];
const LAST_NAMES = ['Silva', 'Novak', 'Martin', 'Berg', 'Rossi', 'Klein', 'Moreau', 'Costa', 'Weber', 'Lund'];
const LOCALES = ['en', 'en', 'en', 'es', 'fr', 'de'] as const;

export interface DemoPerson {
  email: string;
  firstName: string;
  locale: (typeof LOCALES)[number];
}

/**
 * The n-th person of the demo. The two apps draw from one list (the blog's readers start a third of the
 * way into the shop's customers), so some people subscribe to both, as real audiences overlap.
 */
export function demoPerson(n: number): DemoPerson {
  const firstName = FIRST_NAMES[n % FIRST_NAMES.length];
  const lastName = LAST_NAMES[Math.floor(n / FIRST_NAMES.length) % LAST_NAMES.length];
  return {
    email: `${firstName}.${lastName}.${n}@example.com`
      .normalize('NFD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase(),
    firstName,
    locale: LOCALES[n % LOCALES.length],
  };
}

/** Where app `index`'s subscribers start in the list of people. */
export const firstPersonOf = (appIndex: number) => appIndex * 160;
const onBothLists = (n: number) => n >= firstPersonOf(1) && n < firstPersonOf(0) + DEMO_APPS[0].subscribers;

/** Every tenth subscriber is added by an admin (source `admin`), the others sign up through the app. */
export const addedByAdmin = (n: number) => n % 10 === 9;
/**
 * About one in twenty-five has left the newsletter since; never someone on both apps' lists, whose later
 * signup to the other app would be held for confirmation (they had said no to newsletters).
 */
export const hasUnsubscribed = (n: number) => n % 25 === 12 && !onBothLists(n);

export const DEMO_CAMPAIGN = {
  name: 'Spring newsletter',
  subject: 'Spring is here, {{firstName}}: new arrivals and 15% off',
  htmlContent:
    '<h1>Hello {{firstName}},</h1>' +
    '<p>Our spring collection has arrived. Have a look at the <a href="https://shop.example.com/new">new ' +
    'arrivals</a>, or read <a href="https://shop.example.com/blog/spring-care">how to care for linen</a>.</p>' +
    '<p>Use the code SPRING15 at checkout until the end of the month.</p>' +
    '<p><a href="{{unsubscribeUrl}}">Unsubscribe</a></p>',
};

const TICKET_SUBJECTS: readonly [string, TicketTopic][] = [
  ['Order arrived damaged', 'general'],
  ['Cannot log in after password reset', 'technical'],
  ['Charged twice for one order', 'billing'],
  ['Where is my parcel?', 'general'],
  ['Invoice shows the wrong address', 'billing'],
  ['App crashes when I open my basket', 'technical'],
  ['Please add gift wrapping', 'feature'],
  ['Refund not received yet', 'billing'],
  ['Discount code not accepted', 'technical'],
  ['Change the size of my order', 'general'],
];
const TICKET_PRIORITIES: readonly TicketPriority[] = ['normal', 'normal', 'low', 'high', 'normal', 'urgent'];

export interface DemoTicket {
  subject: string;
  message: string;
  topic: TicketTopic;
  priority: TicketPriority;
  email: string;
  /** How long before the run it was created: spread over the last 30 days, more of them recently. */
  ageMs: number;
  /** Resolved (or closed) this long after it was created; absent while open. */
  resolvedAfterMs?: number;
  status: 'pending' | 'in_progress' | 'resolved' | 'closed';
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** The n-th ticket of an app; its subject carries a reference number, which makes it unique in the app. */
export function demoTicket(n: number): DemoTicket {
  const [title, topic] = TICKET_SUBJECTS[n % TICKET_SUBJECTS.length];
  // Squaring the position puts more tickets in the recent days, as a growing shop sees.
  const position = ((n * 37) % 100) / 100;
  // At most 28 days old: inside the stats' default 30-day range at any hour of the day.
  const ageMs = Math.floor(position * position * 27 * DAY_MS) + ((n * 7919) % DAY_MS);
  const status =
    ageMs < 2 * DAY_MS ? (n % 2 ? 'pending' : 'in_progress') : n % 7 === 0 ? 'closed' : 'resolved';
  const resolved = status === 'resolved' || status === 'closed';
  return {
    subject: `${title} (ref. ${10_400 + n})`,
    message: `Hello, about order ${10_400 + n}: ${title.toLowerCase()}. Could you help me, please? Thanks.`,
    topic,
    priority: TICKET_PRIORITIES[n % TICKET_PRIORITIES.length],
    email: demoPerson(n * 3).email,
    ageMs,
    status,
    ...(resolved ? { resolvedAfterMs: Math.min(ageMs - HOUR_MS, ((n % 48) + 2) * HOUR_MS) } : {}),
  };
}

export interface DemoWant {
  title: string;
  description: string;
  category: string;
  votes: number;
}

export const DEMO_WANTS: readonly DemoWant[] = [
  { title: 'Dark mode', description: 'A dark theme for reading at night.', category: 'ui', votes: 23 },
  {
    title: 'Save recipes offline',
    description: 'Keep favourites readable without a connection.',
    category: 'mobile',
    votes: 17,
  },
  {
    title: 'Shopping list export',
    description: 'Send the ingredients of a recipe to my list app.',
    category: 'integrations',
    votes: 12,
  },
  {
    title: 'Metric and imperial units',
    description: 'Switch units on every recipe.',
    category: 'ui',
    votes: 9,
  },
  {
    title: 'Pay with PayPal',
    description: 'Another way to pay at checkout.',
    category: 'checkout',
    votes: 6,
  },
  {
    title: 'Order history as CSV',
    description: 'Download all my orders for my bookkeeping.',
    category: 'account',
    votes: 4,
  },
  {
    title: 'Wish list sharing',
    description: 'Share a wish list link with friends and family.',
    category: 'social',
    votes: 2,
  },
];

export interface DemoFeedback {
  type: FeedbackType;
  subject: string;
  message: string;
}

export const DEMO_FEEDBACK: readonly DemoFeedback[] = [
  { type: 'praise', subject: 'Fast delivery', message: 'Ordered on Monday, arrived on Tuesday. Great!' },
  {
    type: 'bug',
    subject: 'Search ignores accents',
    message: 'Searching "creme" does not find "crème brûlée".',
  },
  { type: 'improvement', subject: 'Bigger photos', message: 'The product photos are too small on a phone.' },
  {
    type: 'question',
    subject: 'Do you ship to Norway?',
    message: 'I could not find the shipping countries.',
  },
  { type: 'feature', subject: 'Newsletter in Spanish', message: 'Could the newsletter come in Spanish?' },
  { type: 'bug', subject: 'Basket empties itself', message: 'After an hour my basket is empty again.' },
  { type: 'praise', subject: 'Lovely recipes', message: 'The weekly letter is the best part of my Sunday.' },
  { type: 'other', subject: 'Typo on the about page', message: 'It says "recieve" in the second paragraph.' },
  { type: 'improvement', subject: 'Print view', message: 'A printable recipe without the comments, please.' },
  { type: 'question', subject: 'Gift cards?', message: 'Do you sell gift cards for birthdays?' },
];

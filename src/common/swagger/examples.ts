import type { OpenAPIObject } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/**
 * The examples Swagger UI shows, as one story: the admin Jane Doe signs in, adds Ada Lovelace to the team,
 * creates the app `my-shop`, gives its backend an API key, and writes a draft newsletter campaign to the
 * app's subscribers (Ada among them, in the contact and analytics examples). Request bodies are built from
 * these values (addRequestExamples), so what staff send with "Try it out" is valid as it stands; responses
 * show the same app, people and records. Kept in one place rather than on each DTO so that a record's id or
 * the app's name reads the same in every schema that shows it.
 *
 * Ids a request would have to know in advance (a template, a ticket) are left out of request bodies: the
 * flow creates them, and a made-up one would be a 404. The `_id` values below appear in responses only.
 */

const APP_ID = 'my-shop';
const APP_ORIGIN = 'https://shop.example.com';
const ADMIN_ID = '665f1a2b3c4d5e6f7a8b9c01';
const API_KEY_ID = '665f1a2b3c4d5e6f7a8b9c02';
const TEAM_MEMBER_ID = '665f1a2b3c4d5e6f7a8b9c0d';
const CAMPAIGN_ID = '665f1a2b3c4d5e6f7a8b9c03';
const NEWSLETTER_TEMPLATE_ID = '665f1a2b3c4d5e6f7a8b9c04';
const EMAIL_TEMPLATE_ID = '665f1a2b3c4d5e6f7a8b9c05';
const CONTACT_ID = '665f1a2b3c4d5e6f7a8b9c06';
const TICKET_ID = '665f1a2b3c4d5e6f7a8b9c07';
const TICKET_MESSAGE_ID = '665f1a2b3c4d5e6f7a8b9c08';
const JOB_ID = '665f1a2b3c4d5e6f7a8b9c09';
const EVENT_ID = '665f1a2b3c4d5e6f7a8b9c0a';
const WANT_ID = '665f1a2b3c4d5e6f7a8b9c0b';
const FEEDBACK_ID = '665f1a2b3c4d5e6f7a8b9c0c';
const PROVIDER_MESSAGE_ID = 'msg_2b7f9c1e4a';
const TOKEN =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI2NjVmMWEyYjNjNGQ1ZTZmN2E4YjljMDEifQ.c2lnbmF0dXJl';
const CAMPAIGN_HTML = '<p>Hello {{firstName}},</p><p>Our spring collection is here.</p>';
const CAMPAIGN_TEXT = 'Hello {{firstName}}, our spring collection is here.';
const FIRST_NAME = 'Ada';
const LAST_NAME = 'Lovelace';
const PERSON = { firstName: FIRST_NAME, lastName: LAST_NAME };

/** Schema name → property → the example Swagger UI shows for it. */
export const PROPERTY_EXAMPLES: Record<string, Record<string, unknown>> = {
  // Sign-in and the back-office team
  // `code`: the authenticator's 6 digits, for staff with two-factor sign-in (ignored for the others).
  LoginDto: { password: 'correct-horse-battery', code: '123456' },
  HashPasswordDto: { password: 'correct-horse-battery' },
  PasswordDto: { password: 'new-password-2030' },
  TeamUser: { id: ADMIN_ID, email: 'jane@example.com', name: 'Jane Doe' },
  TokenResponse: { token: TOKEN },
  EndUserSessionResponse: { token: TOKEN },
  HashResponse: { hash: '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy' },
  CreateUserDto: { email: 'ada@example.com', password: 'correct-horse-battery', ...PERSON },
  UpdateUserDto: { ...PERSON },
  UserView: { _id: TEAM_MEMBER_ID, email: 'ada@example.com', ...PERSON },
  UserProfileInput: { bio: 'Runs the support desk', phone: '+44 20 7946 0958', timezone: 'Europe/London' },
  UserProfileView: {
    avatar: 'https://shop.example.com/avatars/ada.png',
    bio: 'Runs the support desk',
    phone: '+44 20 7946 0958',
    timezone: 'Europe/London',
  },
  UserSettingsInput: { defaultApp: APP_ID },
  UserSettingsView: { defaultApp: APP_ID },

  // Apps and keys
  CreateAppDto: { name: 'My Shop', description: 'Online shop for handmade ceramics' },
  UpdateAppDto: { name: 'My Shop', description: 'Online shop for handmade ceramics and glassware' },
  AppView: {
    name: 'My Shop',
    description: 'Online shop for handmade ceramics',
    features: { canEditTemplates: true, canEditUsers: false, canViewMetrics: true },
    chatChannels: { tickets: '#support', feedback: '#product' },
    allowedOrigins: [APP_ORIGIN],
  },
  PublicAppView: { id: APP_ID, name: 'My Shop' },
  AppPublicKeyView: { id: APP_ID },
  CreateApiKeyDto: { description: 'Used by the order service to open tickets' },
  UpdateApiKeyDto: { name: 'Shop backend', description: 'Used by the order service to open tickets' },
  ApiKeyView: {
    _id: API_KEY_ID,
    appId: APP_ID,
    name: 'Shop backend',
    description: 'Used by the order service to open tickets',
    allowedOrigins: [APP_ORIGIN],
    createdBy: ADMIN_ID,
  },
  ApiKeyWithSecretView: {
    _id: API_KEY_ID,
    appId: APP_ID,
    name: 'Shop backend',
    description: 'Used by the order service to open tickets',
    allowedOrigins: [APP_ORIGIN],
    createdBy: ADMIN_ID,
  },
  RegeneratedApiKeyView: {
    _id: API_KEY_ID,
    key: `sk_${APP_ID}_4f8a1c9e2b7d4a6f8e1c3b5a7d9f2e4c`,
    appId: APP_ID,
    name: 'Shop backend',
  },
  ApiKeyStatsView: { byApp: { [APP_ID]: { total: 2, active: 1, inactive: 1, expired: 0 } } },

  // E-mail templates, queue, events and analytics
  TemplateSenderView: { name: 'My Shop' },
  EmailTemplateView: {
    _id: EMAIL_TEMPLATE_ID,
    appId: APP_ID,
    name: 'welcome',
    subject: 'Welcome, {{firstName}}!',
    htmlTemplate: '<p>Hello {{firstName}}</p>',
    textTemplate: 'Hello {{firstName}}',
    variables: ['firstName'],
  },
  DuplicateEmailTemplateDto: { name: 'welcome (spring)' },
  EmailJobView: {
    _id: JOB_ID,
    payload: { to: 'ada@example.com', subject: 'Our spring collection', html: '[redacted]' },
    result: { messageId: PROVIDER_MESSAGE_ID },
    lastError: 'SMTP 421: try again later',
    idempotencyKey: `campaign:${CAMPAIGN_ID}:${CONTACT_ID}`,
    appId: APP_ID,
    campaignId: CAMPAIGN_ID,
    messageId: PROVIDER_MESSAGE_ID,
  },
  ExportedEmailTemplate: { name: 'welcome', language: 'en' },
  ExportedEmail: {
    _id: JOB_ID,
    appId: APP_ID,
    campaignId: CAMPAIGN_ID,
    subject: 'Our spring collection',
    template: { name: 'welcome', language: 'en' },
  },
  ExportedEvent: {
    type: 'clicked',
    provider: 'tracking',
    appId: APP_ID,
    campaignId: CAMPAIGN_ID,
    messageId: PROVIDER_MESSAGE_ID,
    url: 'https://shop.example.com/spring',
    userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15',
  },
  EmailEventView: {
    _id: EVENT_ID,
    appId: APP_ID,
    contactId: CONTACT_ID,
    messageId: PROVIDER_MESSAGE_ID,
    campaignId: CAMPAIGN_ID,
    stream: 'broadcast',
    url: 'https://shop.example.com/spring',
  },
  MessageEventView: { _id: EVENT_ID, provider: 'smtp' },
  PrimaryProviderResultView: { eventId: EVENT_ID },
  WebhookEventResultView: { eventId: EVENT_ID },
  TopLink: { url: 'https://shop.example.com/spring' },
  CampaignAnalyticsView: { campaignId: CAMPAIGN_ID },
  RecipientView: { contactId: CONTACT_ID, events: ['sent', 'delivered', 'opened'], lastEvent: 'opened' },
  ContactEventView: { _id: EVENT_ID, campaignId: CAMPAIGN_ID, messageId: PROVIDER_MESSAGE_ID },
  ContactAnalyticsView: { contactId: CONTACT_ID },
  StreamTotals: {
    sent: 1240,
    delivered: 1228,
    opened: 512,
    clicked: 88,
    bounced: 12,
    complained: 1,
    unsubscribed: 4,
  },

  // Contacts, consent and the newsletter
  ContactView: { _id: CONTACT_ID, ...PERSON, tags: ['customer'] },
  ContactDetailView: { _id: CONTACT_ID, ...PERSON, tags: ['customer'] },
  SubscriptionView: { appId: APP_ID, source: 'joinlist', referralUrl: 'https://shop.example.com/newsletter' },
  ConsentEventView: {
    reason: 'Asked by phone to stop offers',
    source: 'admin',
    appId: APP_ID,
    actor: 'jane@example.com',
    ip: '203.0.113.7',
    referralUrl: 'https://shop.example.com/newsletter',
  },
  ConsentChangeDto: { reason: 'Asked by phone to stop offers' },
  OptOutDto: { reason: 'Asked by e-mail to be forgotten by the newsletter' },
  JoinlistDto: { appId: APP_ID, firstName: FIRST_NAME },
  SubscribeDto: { firstName: FIRST_NAME },
  SubscribeResult: { firstName: FIRST_NAME },
  CreateSubscriberDto: { firstName: FIRST_NAME },
  ImportSubscriberEntry: { firstName: FIRST_NAME },
  SubscriberView: { _id: CONTACT_ID, ...PERSON },
  SkippedEntry: { email: 'not-an-address', error: 'email must be an email address' },
  CreateNewsletterTemplateDto: {
    name: 'Monthly news',
    subject: 'News from My Shop, {{firstName}}',
    htmlContent: CAMPAIGN_HTML,
    textContent: CAMPAIGN_TEXT,
  },
  UpdateNewsletterTemplateDto: {
    name: 'Monthly news',
    subject: 'News from My Shop, {{firstName}}',
    htmlContent: CAMPAIGN_HTML,
    textContent: CAMPAIGN_TEXT,
  },
  NewsletterTemplateView: {
    _id: NEWSLETTER_TEMPLATE_ID,
    name: 'Monthly news',
    subject: 'News from My Shop, {{firstName}}',
    htmlContent: CAMPAIGN_HTML,
    textContent: CAMPAIGN_TEXT,
    createdBy: ADMIN_ID,
  },
  CreateCampaignDto: {
    name: 'Spring collection',
    subject: 'Our spring collection, {{firstName}}',
    htmlContent: CAMPAIGN_HTML,
    textContent: CAMPAIGN_TEXT,
  },
  UpdateCampaignDto: {
    name: 'Spring collection',
    subject: 'Our spring collection is here, {{firstName}}',
    htmlContent: CAMPAIGN_HTML,
    textContent: CAMPAIGN_TEXT,
  },
  // A draft, as POST answers it: nothing sent, nothing held, written inline rather than from a template.
  CampaignView: {
    _id: CAMPAIGN_ID,
    appId: APP_ID,
    name: 'Spring collection',
    subject: 'Our spring collection, {{firstName}}',
    htmlContent: CAMPAIGN_HTML,
    textContent: CAMPAIGN_TEXT,
    templateId: null,
    status: 'draft',
    sentAt: null,
    completedAt: null,
    createdBy: ADMIN_ID,
    heldReason: null,
    heldAt: null,
  },
  CampaignSendView: { jobId: JOB_ID },
  CampaignTestView: { jobId: JOB_ID },

  // Tickets, wants and feedback (from the app's customers)
  CreateTicketBody: {
    subject: 'Order 1042 arrived broken',
    message: 'The large vase was cracked in the box. Can you send a new one?',
    shopId: 'eu-west',
  },
  TicketView: {
    _id: TICKET_ID,
    appId: APP_ID,
    shopId: 'eu-west',
    subject: 'Order 1042 arrived broken',
    message: 'The large vase was cracked in the box. Can you send a new one?',
  },
  TicketAttachmentView: {
    key: `${APP_ID}/${TICKET_ID}/photo.png`,
    filename: 'photo.png',
    mimetype: 'image/png',
  },
  TicketActivityView: { _id: TICKET_ID, subject: 'Order 1042 arrived broken', email: 'ada@example.com' },
  CreateTicketMessageDto: {
    content: 'Sorry about that! A replacement ships today.',
    authorName: 'Jane from My Shop',
  },
  TicketMessageView: {
    _id: TICKET_MESSAGE_ID,
    content: 'Sorry about that! A replacement ships today.',
    authorName: 'Jane from My Shop',
  },
  // The ticket of the list above: the id staff copy from GET /{appId}/tickets.
  BulkDeleteTicketsDto: { ids: [TICKET_ID] },
  BulkDeleteResultSchema: { message: '2 ticket(s) deleted' },
  CreateWantDto: {
    title: 'Gift wrapping',
    description: 'Let me add gift wrapping and a card at checkout.',
    category: 'checkout',
  },
  UpdateWantDto: {
    title: 'Gift wrapping at checkout',
    description: 'Let me add gift wrapping and a card at checkout.',
    category: 'checkout',
  },
  WantPublicView: {
    _id: WANT_ID,
    appId: APP_ID,
    title: 'Gift wrapping',
    description: 'Let me add gift wrapping and a card at checkout.',
    category: 'checkout',
    authorEmail: 'ada@example.com',
  },
  WantAdminView: {
    _id: WANT_ID,
    appId: APP_ID,
    title: 'Gift wrapping',
    description: 'Let me add gift wrapping and a card at checkout.',
    category: 'checkout',
    authorEmail: 'ada@example.com',
  },
  WantStats: { byCategory: { checkout: 3, delivery: 1 }, byPriority: { high: 1, medium: 3 } },
  CreateFeedbackDto: {
    subject: 'Search is great',
    message: 'Found the exact mug I wanted in seconds.',
  },
  UpdateFeedbackDto: {
    subject: 'Search is great',
    message: 'Found the exact mug I wanted in seconds.',
  },
  FeedbackView: {
    _id: FEEDBACK_ID,
    appId: APP_ID,
    subject: 'Search is great',
    message: 'Found the exact mug I wanted in seconds.',
  },
  FeedbackStats: { byType: { bug: 2, praise: 5 }, byStatus: { new: 4, resolved: 3 } },

  // Newsletter audience
  PutNewsletterTopicsDto: {
    topics: [
      { key: 'product-news', name: 'Product news' },
      { key: 'offers', name: 'Offers' },
    ],
  },
  CreateSegmentDto: { name: 'Engaged readers', filter: { status: 'active', openedWithinDays: 90 } },
  UpdateSegmentDto: { name: 'Engaged readers (90 days)' },

  // Health
  EmailWorkerStatus: { queue: { pending: 0, processing: 0, completed: 128, failed: 0, dead: 0 } },
  HealthRecord: { chatBacklog: { pending: 0, failed: 0 } },
};

/**
 * Sets the examples above on the generated schemas, where the DTO gave none. A schema or property that no
 * longer exists is an error, so a rename cannot leave an example behind silently.
 */
export function addPropertyExamples(document: OpenAPIObject): void {
  const schemas = (document.components?.schemas ?? {}) as Record<string, SchemaObject>;
  for (const [schemaName, examples] of Object.entries(PROPERTY_EXAMPLES)) {
    for (const [property, example] of Object.entries(examples)) {
      const target = schemas[schemaName]?.properties?.[property] as SchemaObject | undefined;
      if (!target || '$ref' in target) {
        throw new Error(`OpenAPI examples: no property ${schemaName}.${property} to give an example`);
      }
      target.example ??= example;
    }
  }
}

/**
 * The audit catalogue: every state-changing staff route, by its OpenAPI operationId, with the action its
 * records carry. test/audit-routes.e2e-spec.ts walks the route table: a new bearer route that writes (any
 * method but GET) fails there until it is named here or in NOT_AUDITED with a reason.
 */
/** Where `@ApiOperation()` keeps its options (@nestjs/swagger's DECORATORS.API_OPERATION, not exported). */
export const API_OPERATION_METADATA = 'swagger/apiOperation';

/** The operationId `@ApiOperation()` gave a handler. */
export function operationIdOf(handler: object): string | undefined {
  const operation = Reflect.getMetadata(API_OPERATION_METADATA, handler) as
    { operationId?: string } | undefined;
  return operation?.operationId;
}

export interface AuditSpec {
  /** `<target>.<verb>`: what the records of this route say happened. */
  action: string;
  /** The kind of thing changed (`apiKey`, `contact`…). */
  target: string;
  /** The path parameter with the target's id (default `id`); a create records the id it answered. */
  idParam?: string;
  /** The path parameter naming the app (default `appId`). */
  appParam?: string;
}

const TEMPLATE = { target: 'template', idParam: 'templateId' };
const TICKET = { target: 'ticket', idParam: 'messageId' };
const API_KEY = { target: 'apiKey', idParam: 'keyId' };
const APP = { target: 'app', appParam: 'id' };

export const AUDITED: Record<string, AuditSpec> = {
  // Sign-in, sessions and two-factor
  login: { action: 'auth.login', target: 'user' },
  logout: { action: 'auth.logout', target: 'user' },
  setupTwoFactor: { action: 'twoFactor.setup', target: 'user' },
  enableTwoFactor: { action: 'twoFactor.enable', target: 'user' },
  disableTwoFactor: { action: 'twoFactor.disable', target: 'user' },
  // Staff accounts
  createUser: { action: 'user.create', target: 'user' },
  updateUser: { action: 'user.update', target: 'user' },
  deactivateUser: { action: 'user.deactivate', target: 'user' },
  changeUserPassword: { action: 'user.changePassword', target: 'user' },
  revokeUserSessions: { action: 'user.revokeSessions', target: 'user' },
  resetUserTwoFactor: { action: 'user.resetTwoFactor', target: 'user' },
  // Apps and keys
  createApp: { action: 'app.create', ...APP },
  updateApp: { action: 'app.update', ...APP },
  deleteApp: { action: 'app.delete', ...APP },
  rotateAppKey: { action: 'app.rotateKey', ...APP },
  toggleApp: { action: 'app.toggle', ...APP },
  createApiKey: { action: 'apiKey.create', ...API_KEY },
  updateApiKey: { action: 'apiKey.update', ...API_KEY },
  deleteApiKey: { action: 'apiKey.delete', ...API_KEY },
  revokeApiKey: { action: 'apiKey.revoke', ...API_KEY },
  regenerateApiKey: { action: 'apiKey.regenerate', ...API_KEY },
  // Sender domains: the DKIM key made on create, the state a verification sets
  createSenderDomain: { action: 'senderDomain.create', target: 'senderDomain' },
  verifySenderDomain: { action: 'senderDomain.verify', target: 'senderDomain' },
  deleteSenderDomain: { action: 'senderDomain.delete', target: 'senderDomain' },
  rotateSenderDomainKey: { action: 'senderDomain.rotateKey', target: 'senderDomain' },
  // Chat routing
  createChatRoutingRule: { action: 'chatRule.create', target: 'chatRule' },
  updateChatRoutingRule: { action: 'chatRule.update', target: 'chatRule' },
  deleteChatRoutingRule: { action: 'chatRule.delete', target: 'chatRule' },
  // E-mail templates
  createTemplate: { action: 'template.create', ...TEMPLATE },
  replaceTemplate: { action: 'template.replace', ...TEMPLATE },
  updateTemplate: { action: 'template.update', ...TEMPLATE },
  deleteTemplate: { action: 'template.delete', ...TEMPLATE },
  toggleTemplate: { action: 'template.toggle', ...TEMPLATE },
  duplicateTemplate: { action: 'template.duplicate', ...TEMPLATE },
  // People: erasure, consent, export (a read, recorded because it hands out a person's data)
  deleteContact: { action: 'contact.erase', target: 'contact' },
  setContactConsent: { action: 'contact.setConsent', target: 'contact' },
  optOutContact: { action: 'contact.optOut', target: 'contact' },
  exportContact: { action: 'contact.export', target: 'contact' },
  // Newsletter
  createSubscriber: { action: 'subscriber.create', target: 'contact' },
  importSubscribers: { action: 'subscriber.import', target: 'contact' },
  deleteSubscriber: { action: 'subscriber.delete', target: 'contact' },
  createNewsletterTemplate: { action: 'newsletterTemplate.create', target: 'newsletterTemplate' },
  updateNewsletterTemplate: { action: 'newsletterTemplate.update', target: 'newsletterTemplate' },
  deleteNewsletterTemplate: { action: 'newsletterTemplate.delete', target: 'newsletterTemplate' },
  createCampaign: { action: 'campaign.create', target: 'campaign' },
  updateCampaign: { action: 'campaign.update', target: 'campaign' },
  deleteCampaign: { action: 'campaign.delete', target: 'campaign' },
  sendCampaign: { action: 'campaign.send', target: 'campaign' },
  testCampaign: { action: 'campaign.testSend', target: 'campaign' },
  resumeCampaign: { action: 'campaign.resume', target: 'campaign' },
  scheduleCampaign: { action: 'campaign.schedule', target: 'campaign' },
  unscheduleCampaign: { action: 'campaign.unschedule', target: 'campaign' },
  putNewsletterTopics: { action: 'newsletterTopics.replace', target: 'app', idParam: 'appId' },
  createSegment: { action: 'segment.create', target: 'segment' },
  updateSegment: { action: 'segment.update', target: 'segment' },
  deleteSegment: { action: 'segment.delete', target: 'segment' },
  // Tickets, wants, feedback
  updateAnyTicket: { action: 'ticket.update', ...TICKET },
  deleteAnyTicket: { action: 'ticket.delete', ...TICKET },
  setAnyTicketStatus: { action: 'ticket.setStatus', ...TICKET },
  createTicket: { action: 'ticket.create', ...TICKET },
  deleteTickets: { action: 'ticket.deleteMany', ...TICKET },
  updateTicket: { action: 'ticket.update', ...TICKET },
  deleteTicket: { action: 'ticket.delete', ...TICKET },
  setTicketStatus: { action: 'ticket.setStatus', ...TICKET },
  addTicketMessage: { action: 'ticket.reply', ...TICKET },
  updateWant: { action: 'want.update', target: 'want' },
  deleteWant: { action: 'want.delete', target: 'want' },
  setWantStatus: { action: 'want.setStatus', target: 'want' },
  setWantPriority: { action: 'want.setPriority', target: 'want' },
  updateFeedback: { action: 'feedback.update', target: 'feedback' },
  deleteFeedback: { action: 'feedback.delete', target: 'feedback' },
  setFeedbackStatus: { action: 'feedback.setStatus', target: 'feedback' },
  setFeedbackPriority: { action: 'feedback.setPriority', target: 'feedback' },
};

/** Writing routes that change nothing a reviewer needs to see, and why. */
export const NOT_AUDITED: Record<string, string> = {
  refreshToken: 'answers a fresh token for one the guard accepted; changes nothing',
};

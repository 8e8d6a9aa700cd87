/** A stored template as the sender needs it (the templates area owns the full record). */
export interface SendableTemplate {
  sender?: { name?: string; email: string } | null;
}

export interface RenderedContent {
  subject: string;
  html: string;
  text: string;
}

/**
 * How the sender finds and renders a stored template; bound to the templates service in EmailModule, so the
 * queue does not depend on how templates are stored.
 */
export interface EmailTemplateSource<T extends SendableTemplate = SendableTemplate> {
  resolveForSending(appId: string | null, name: string, language: string): Promise<T | null>;
  render(template: T, variables: Record<string, unknown>): Promise<RenderedContent>;
}

export const EMAIL_TEMPLATE_SOURCE = Symbol('EMAIL_TEMPLATE_SOURCE');

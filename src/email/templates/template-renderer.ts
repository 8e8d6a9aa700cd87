import type { FieldSource } from './template-engine';
import { assertWithinLength } from './template-limits';
import { checkInSandbox, renderInSandbox } from './template-sandbox';

/**
 * Rendering of e-mail templates with Handlebars, in the template workers (template-sandbox.ts). The HTML
 * body is compiled with HTML escaping (`{{x}}` escapes, `{{{x}}}` does not); the subject and the text body
 * without, so `&` stays `&` there. Variables that the template names but the caller did not pass (declared
 * in `variables` or not) render as empty strings: `strict` is off, nothing throws for them.
 */

/** The fields of a template that rendering needs. */
export interface RenderableTemplate {
  subject: string;
  htmlTemplate: string;
  textTemplate: string;
}

export interface RenderedEmail {
  subject: string;
  html: string;
  text: string;
}

export type TemplateField = 'subject' | 'htmlTemplate' | 'textTemplate';

const FIELDS = ['subject', 'htmlTemplate', 'textTemplate'] as const;

const sourceOf = (field: TemplateField, source: string): FieldSource => ({
  field,
  source,
  mode: field === 'htmlTemplate' ? 'html' : 'plain',
});

/** Subject lines are one header line: line breaks produced by variables become spaces. */
const oneLine = (value: string) => value.replace(/[\r\n]+/g, ' ').trim();

/**
 * Throws a `TemplateProblem` naming the first field that is too long, does not compile, or fails (or goes
 * over the template budget) when rendered with an empty context. Run before storing a template.
 */
export async function validateTemplateSources(
  sources: Partial<Record<TemplateField, string>>,
): Promise<void> {
  const fields = FIELDS.filter((f) => sources[f] !== undefined);
  // Every field's length first: one field too long means nothing is compiled.
  for (const field of fields) assertWithinLength(field, sources[field]!);
  await checkInSandbox(fields.map((field) => sourceOf(field, sources[field]!)));
}

/**
 * `{subject, html, text}` of a template for these variables. Missing variables render empty; a template
 * that fails at run time or goes over the budget throws a `TemplateProblem` naming the field.
 */
export async function renderEmailTemplate(
  template: RenderableTemplate,
  variables: Record<string, unknown> = {},
): Promise<RenderedEmail> {
  const [subject, html, text] = await renderInSandbox(
    FIELDS.map((field) => sourceOf(field, template[field])),
    variables,
  );
  return { subject: oneLine(subject), html, text };
}

/** The declared variables that `variables` does not provide (they render empty); for logging by senders. */
export function missingVariables(declared: readonly string[], variables: Record<string, unknown>): string[] {
  return declared.filter((path) => {
    let value: unknown = variables;
    for (const part of path.split('.')) {
      if (value === null || typeof value !== 'object') return true;
      value = Object.hasOwn(value, part) ? (value as Record<string, unknown>)[part] : undefined;
    }
    return value === undefined || value === null;
  });
}

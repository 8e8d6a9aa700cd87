import { compileTemplate, runTemplate, type TemplateMode } from './template-compiler';
import { assertWithinLimits } from './template-limits';

/**
 * Rendering of e-mail templates with Handlebars (pure: no Nest, no database). The HTML body is compiled
 * with HTML escaping (`{{x}}` escapes, `{{{x}}}` does not); the subject and the text body with
 * `noEscape`, so `&` stays `&` there. Variables that the template names but the caller did not pass
 * (declared in `variables` or not) render as empty strings: `strict` is off, nothing throws for them.
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

const modeOf = (field: TemplateField): TemplateMode => (field === 'htmlTemplate' ? 'html' : 'plain');

/** Subject lines are one header line: line breaks produced by variables become spaces. */
const oneLine = (value: string) => value.replace(/[\r\n]+/g, ' ').trim();

/**
 * Throws a `TemplateProblem` naming the first field that is over a limit, does not parse, or fails when
 * rendered with an empty context. Run before storing a template; the compile is kept for its sends.
 */
export function validateTemplateSources(sources: Partial<Record<TemplateField, string>>): void {
  const fields = (['subject', 'htmlTemplate', 'textTemplate'] as const).filter(
    (f) => sources[f] !== undefined,
  );
  // Every field's size and expressions first: one over-limit field means nothing is compiled.
  for (const field of fields) assertWithinLimits(field, sources[field]!);
  for (const field of fields) compileTemplate(field, sources[field]!, modeOf(field));
}

const render = (template: RenderableTemplate, field: TemplateField, variables: object) =>
  runTemplate(field, compileTemplate(field, template[field], modeOf(field)), variables);

/**
 * `{subject, html, text}` of a template for these variables, compiled once per content (template-compiler.ts).
 * Missing variables render empty; a template that fails at run time throws a `TemplateProblem` naming the field.
 */
export function renderEmailTemplate(
  template: RenderableTemplate,
  variables: Record<string, unknown> = {},
): RenderedEmail {
  return {
    subject: oneLine(render(template, 'subject', variables)),
    html: render(template, 'htmlTemplate', variables),
    text: render(template, 'textTemplate', variables),
  };
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

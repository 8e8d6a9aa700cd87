import Handlebars from 'handlebars';

/**
 * Rendering of e-mail templates with Handlebars (pure: no Nest, no database). The HTML body is compiled
 * with HTML escaping (`{{x}}` escapes, `{{{x}}}` does not); the subject and the text body with
 * `noEscape`, so `&` stays `&` there. Variables that the template names but the caller did not pass
 * (declared in `variables` or not) render as empty strings: `strict` is off, nothing throws for them.
 */

/** The fields of a template that rendering needs; `_id` and `updatedAt` key the compiled-template cache. */
export interface RenderableTemplate {
  /** An ObjectId (or its hex string): part of the compile cache's key. */
  _id?: { toString(): string } | null;
  updatedAt?: Date | string | number;
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

/** A template field that does not compile (or fails on an empty context); the message is the engine's. */
export class TemplateCompileError extends Error {
  constructor(
    readonly field: TemplateField,
    readonly engineMessage: string,
  ) {
    super(`${field}: ${engineMessage}`);
    this.name = 'TemplateCompileError';
  }
}

/** An isolated Handlebars environment: helpers or partials registered elsewhere never leak in. */
const engine = Handlebars.create();

type Compiled = Handlebars.TemplateDelegate;

const compileField = (field: TemplateField, source: string): Compiled =>
  engine.compile(source, { strict: false, noEscape: field !== 'htmlTemplate' });

/** Subject lines are one header line: line breaks produced by variables become spaces. */
const oneLine = (value: string) => value.replace(/[\r\n]+/g, ' ').trim();

/**
 * Throws a `TemplateCompileError` naming the first field that does not parse, or that fails when rendered
 * with an empty context (e.g. an unknown helper called with arguments). Run before storing a template.
 */
export function validateTemplateSources(sources: Partial<Record<TemplateField, string>>): void {
  for (const field of ['subject', 'htmlTemplate', 'textTemplate'] as const) {
    const source = sources[field];
    if (source === undefined) continue;
    try {
      compileField(field, source)({});
    } catch (error) {
      throw new TemplateCompileError(field, error instanceof Error ? error.message : String(error));
    }
  }
}

interface CacheEntry {
  sources: [string, string, string];
  subject: Compiled;
  html: Compiled;
  text: Compiled;
}

/** Compiled templates keyed by `_id` + `updatedAt`; least recently used entries go first. */
export const TEMPLATE_CACHE_SIZE = 500;
const cache = new Map<string, CacheEntry>();

function cacheKey(template: RenderableTemplate): string | undefined {
  if (template._id === undefined || template._id === null || template.updatedAt === undefined)
    return undefined;
  return `${String(template._id)}@${new Date(template.updatedAt).getTime()}`;
}

function compiledOf(template: RenderableTemplate): CacheEntry {
  const key = cacheKey(template);
  const sources: CacheEntry['sources'] = [template.subject, template.htmlTemplate, template.textTemplate];
  const cached = key === undefined ? undefined : cache.get(key);
  // The sources are compared too, so two writes within one millisecond can never serve a stale body.
  if (cached && cached.sources.every((source, i) => source === sources[i])) {
    cache.delete(key!);
    cache.set(key!, cached);
    return cached;
  }
  const entry: CacheEntry = {
    sources,
    subject: compileField('subject', template.subject),
    html: compileField('htmlTemplate', template.htmlTemplate),
    text: compileField('textTemplate', template.textTemplate),
  };
  if (key !== undefined) {
    cache.set(key, entry);
    if (cache.size > TEMPLATE_CACHE_SIZE) cache.delete(cache.keys().next().value!);
  }
  return entry;
}

/** The number of compiled templates held (for tests). */
export const templateCacheSize = () => cache.size;

function run(field: TemplateField, compiled: Compiled, variables: Record<string, unknown>): string {
  try {
    return compiled(variables);
  } catch (error) {
    throw new TemplateCompileError(field, error instanceof Error ? error.message : String(error));
  }
}

/**
 * `{subject, html, text}` of a template for these variables. Missing variables render empty; a template
 * that fails at run time (e.g. an unknown helper inside a branch the validation did not take) throws a
 * `TemplateCompileError` naming the field.
 */
export function renderEmailTemplate(
  template: RenderableTemplate,
  variables: Record<string, unknown> = {},
): RenderedEmail {
  const compiled = compiledOf(template);
  return {
    subject: oneLine(run('subject', compiled.subject, variables)),
    html: run('htmlTemplate', compiled.html, variables),
    text: run('textTemplate', compiled.text, variables),
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

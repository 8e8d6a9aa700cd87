import { createHash } from 'node:crypto';
import Handlebars from 'handlebars';
import { assertNesting, assertWithinLimits, TemplateProblem } from './template-limits';

/**
 * The one place Handlebars sources are compiled (e-mail templates and campaigns), pure: no Nest, no
 * database. Every source is checked against TEMPLATE_LIMITS before Handlebars parses it, and compiled at
 * most once per process for a given content (a bounded cache keyed by its SHA-256), so saving, test copies
 * and sends of the same content share one compile.
 */

export type Compiled = Handlebars.TemplateDelegate;

/** `html`: `{{x}}` escapes HTML; `plain` (subjects, text parts): nothing is escaped, `&` stays `&`. */
export type TemplateMode = 'html' | 'plain';

/** An isolated Handlebars environment: helpers or partials registered elsewhere never leak in. */
const engine = Handlebars.create();

/**
 * `knownHelpersOnly`: no helper is ever registered in this environment, so only the built-in ones exist.
 * Saying so lets Handlebars emit a plain property read for `{{name}}` instead of the generic "helper or
 * property?" call (with its options object and source location), about a quarter of the generated code;
 * that generated code, not the parsing, was most of the 7 s a 200 KB template of `{{a}}` took. An unknown
 * helper called with arguments becomes a compile error (it was a "Missing helper" at render time).
 */
const optionsOf = (mode: TemplateMode): CompileOptions => ({
  strict: false,
  knownHelpersOnly: true,
  noEscape: mode === 'plain',
});

/** Entries kept, and the characters of their sources together (a compiled body is several times its source). */
export const COMPILE_CACHE_LIMITS = { entries: 500, sourceChars: 20_000_000 } as const;

const cache = new Map<string, { compiled: Compiled; chars: number }>();
let cachedChars = 0;
let compiles = 0;

const keyOf = (mode: TemplateMode, source: string) =>
  createHash('sha256').update(mode).update('\0').update(source).digest('base64url');

/** Compiles that actually ran in this process (tests read it to see the cache at work). */
export const templateCompiles = () => compiles;
/** The number of compiled sources held. */
export const compiledTemplatesCached = () => cache.size;

function remember(key: string, compiled: Compiled, chars: number): void {
  cache.set(key, { compiled, chars });
  cachedChars += chars;
  while (cache.size > COMPILE_CACHE_LIMITS.entries || cachedChars > COMPILE_CACHE_LIMITS.sourceChars) {
    const [oldest, entry] = cache.entries().next().value!;
    cache.delete(oldest);
    cachedChars -= entry.chars;
  }
}

/**
 * The compiled template of `source`, from the cache or compiled now. Throws a `TemplateProblem` naming
 * `field` when the source is over a limit (before any parsing) or does not compile. The template is run
 * once with no variables as part of compiling (Handlebars compiles lazily, on the first call), which also
 * surfaces errors such as an unknown partial. `addedChars`: characters the caller added to an author's
 * source (tracking markers), not counted against the size limit.
 */
export function compileTemplate(field: string, source: string, mode: TemplateMode, addedChars = 0): Compiled {
  const key = keyOf(mode, source);
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit.compiled;
  }
  assertWithinLimits(field, source, addedChars);
  let compiled: Compiled;
  try {
    const program = engine.parse(source);
    assertNesting(field, program);
    compiles += 1;
    compiled = engine.compile(program, optionsOf(mode));
    compiled({});
  } catch (error) {
    if (error instanceof TemplateProblem) throw error;
    throw new TemplateProblem(field, messageOf(error));
  }
  remember(key, compiled, source.length);
  return compiled;
}

/** Runs a compiled template; a failure (e.g. a partial missing in a branch not taken before) names the field. */
export function runTemplate(field: string, compiled: Compiled, variables: object): string {
  try {
    return compiled(variables);
  } catch (error) {
    throw new TemplateProblem(field, messageOf(error));
  }
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

import { createHash } from 'node:crypto';
import Handlebars from 'handlebars';
import { convert } from 'html-to-text';
import { TEMPLATE_LIMITS } from './template-limits';

/**
 * Compiling and running Handlebars sources. Only a template worker runs this (template-worker.ts): its
 * cost is bounded by the worker's deadline and heap (template-sandbox.ts), never by looking at the source.
 * What a template may contain is decided here: the common syntax (`{{x}}`, `{{{x}}}`, `#if`, `#unless`,
 * `#each`, `#with`, `else`, `lookup`), no partials, no decorators, nothing that reaches I/O.
 */

/** `html`: `{{x}}` escapes HTML; `plain` (subjects, text parts): nothing escaped; `html-to-text`: plain, of a
 * source first converted from HTML (a campaign without a text part). */
export type TemplateMode = 'html' | 'plain' | 'html-to-text';

/** One field of a template to compile: its name (for messages), its source, how it is compiled. */
export interface FieldSource {
  field: string;
  source: string;
  mode: TemplateMode;
}

/** Per set of variables: the rendered fields in order, or the problem of the first field that failed. */
export type RenderResult = { values: string[] } | { field: string; problem: string };

/** A field that cannot be compiled or run; the message names the field. */
export class FieldProblem extends Error {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${field}: ${problem}`);
  }
}

/**
 * An isolated environment without `log`, the one built-in helper with a side effect (it writes to stdout).
 */
const engine = Handlebars.create();
engine.unregisterHelper('log');
/** Handlebars also logs by itself (e.g. a refused `constructor` read): nothing from a template is logged. */
Handlebars.logger.level = Number.MAX_SAFE_INTEGER;

/**
 * `knownHelpersOnly` with `log` unknown: calling anything but the built-in block helpers and `lookup` is a
 * compile error (a 400 on save) instead of a property read or a "missing helper" at send time, and each
 * `{{name}}` compiles to a plain property read.
 */
const optionsOf = (mode: TemplateMode): CompileOptions => ({
  strict: false,
  knownHelpersOnly: true,
  knownHelpers: { log: false },
  noEscape: mode !== 'html',
});

/**
 * Statements refused anywhere in a template: partials and decorators (`{{> p}}`, `{{#> p}}`, `{{#*inline}}`).
 */
const REFUSED: Record<string, string> = {
  PartialStatement: 'partials ({{> name}}) are not supported',
  PartialBlockStatement: 'partial blocks ({{#> name}}) are not supported',
  DecoratorBlock: 'inline partials and decorators ({{#* …}}) are not supported',
  Decorator: 'decorators ({{* …}}) are not supported',
};

type Node = hbs.AST.Node & Record<string, unknown>;

/**
 * Blocks within blocks a template may nest. Real templates nest a handful; the compiler recurses per level,
 * and whether 1,500 levels overflow its stack depended on how warm the JIT was, so the bound is counted.
 */
const MAX_NESTING = 100;

/**
 * Throws on the first refused statement or on nesting past MAX_NESTING; an explicit stack, so no template
 * can overflow ours.
 */
function assertSupported(field: string, program: hbs.AST.Program): void {
  const stack: { node: Node; depth: number }[] = [{ node: program as unknown as Node, depth: 0 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    const refused = REFUSED[node.type];
    if (refused) throw new FieldProblem(field, refused);
    const childDepth = node.type === 'Program' ? depth + 1 : depth;
    if (childDepth > MAX_NESTING)
      throw new FieldProblem(field, `nests too deeply (over ${MAX_NESTING} levels)`);
    for (const value of Object.values(node)) {
      for (const child of Array.isArray(value) ? value : [value]) {
        if (child !== null && typeof child === 'object' && typeof (child as Node).type === 'string')
          stack.push({ node: child as Node, depth: childDepth });
      }
    }
  }
}

/**
 * Headings and table headers keep their case: upper-casing would turn `{{firstName}}` into `{{FIRSTNAME}}`.
 */
const HTML_TO_TEXT = {
  wordwrap: 78,
  // Deeper elements are cut (with `...`): the converter recurses; 20,000 nested tags overflowed the stack.
  limits: { maxDepth: 40 },
  selectors: [
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
    { selector: 'table', options: { uppercaseHeaderCells: false } },
    { selector: 'img', format: 'skip' },
  ],
};

/** The plain-text part of HTML that has none: a well-kept converter (html-to-text), links in brackets. */
export function textFromHtml(html: string): string {
  return convert(html, HTML_TO_TEXT);
}

type Compiled = Handlebars.TemplateDelegate;

/** Compiled sources kept by one worker: well below its heap (a compiled body is several times its source). */
export const COMPILE_CACHE_LIMITS = { entries: 200, sourceChars: 2_000_000 } as const;
const cache = new Map<string, { compiled: Compiled; chars: number }>();
let cachedChars = 0;

const keyOf = ({ mode, source }: FieldSource) =>
  createHash('sha256').update(mode).update('\0').update(source).digest('base64url');

function remember(key: string, compiled: Compiled, chars: number): void {
  cache.set(key, { compiled, chars });
  cachedChars += chars;
  while (cache.size > COMPILE_CACHE_LIMITS.entries || cachedChars > COMPILE_CACHE_LIMITS.sourceChars) {
    const [oldest, entry] = cache.entries().next().value!;
    cache.delete(oldest);
    cachedChars -= entry.chars;
  }
}

const messageOf = (error: unknown) =>
  error instanceof RangeError ? 'nests too deeply' : error instanceof Error ? error.message : String(error);

/** The compiled field, from this worker's cache or compiled now (and run once with no variables). */
function compile(field: FieldSource): Compiled {
  const key = keyOf(field);
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit.compiled;
  }
  let compiled: Compiled;
  try {
    const source = field.mode === 'html-to-text' ? textFromHtml(field.source) : field.source;
    const program = engine.parse(source);
    assertSupported(field.field, program);
    compiled = engine.compile(program, optionsOf(field.mode));
    // Handlebars compiles on the first call: errors such as an unknown helper surface here.
    run(field.field, compiled, {});
  } catch (error) {
    if (error instanceof FieldProblem) throw error;
    throw new FieldProblem(field.field, messageOf(error));
  }
  remember(key, compiled, field.source.length);
  return compiled;
}

function run(field: string, compiled: Compiled, variables: object): string {
  let out: string;
  try {
    out = compiled(variables);
  } catch (error) {
    throw new FieldProblem(field, messageOf(error));
  }
  if (out.length > TEMPLATE_LIMITS.outputChars)
    throw new FieldProblem(field, `renders more than ${TEMPLATE_LIMITS.outputChars} characters`);
  return out;
}

/**
 * Every field rendered for each set of variables. A field that does not compile fails every set; a set
 * whose rendering fails (or is too long) fails alone.
 */
export function renderFields(fields: FieldSource[], variablesList: object[]): RenderResult[] {
  let compiled: Compiled[];
  try {
    compiled = fields.map(compile);
  } catch (error) {
    const { field, problem } = error as FieldProblem;
    return variablesList.map(() => ({ field, problem }));
  }
  return variablesList.map((variables) => {
    try {
      return { values: compiled.map((c, i) => run(fields[i].field, c, variables)) };
    } catch (error) {
      const { field, problem } = error as FieldProblem;
      return { field, problem };
    }
  });
}

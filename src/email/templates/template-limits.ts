/**
 * What a template may cost (docs/decisions.md "Issue 24: template cost"). Compiling is synchronous and
 * grows with the number of expressions, not with the characters around them, so each limit bounds one
 * part of that work; together they keep the largest accepted template's compile well under 100 ms
 * (`npm run bench -- template-compile`).
 */
export const TEMPLATE_LIMITS = {
  /** Characters of one field. Gmail clips HTML past ~100 KB anyway; plain text compiles in a few ms. */
  maxLength: 100_000,
  /** Names, path segments, literals and sub-expressions inside `{{…}}`, summed over the field. */
  maxExpressions: 500,
  /** Blocks within blocks and sub-expressions within sub-expressions. */
  maxDepth: 10,
} as const;

/** A field over a limit, or one that does not compile; the message names the field. */
export class TemplateProblem extends Error {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`${field}: ${problem}`);
    this.name = 'TemplateProblem';
  }
}

/** A string literal, or a run of characters that is neither a separator nor a quote. */
const TOKEN = /"[^"]*"|'[^']*'|[^\s()=./"'|]+|\(/g;

/**
 * The expressions of a source counted without parsing it: every token inside `{{…}}` (a name, a path
 * segment, a literal, a `(`), comments skipped. Linear (indexOf, no backtracking), so an over-limit
 * source is refused before Handlebars' parser, itself a cost, runs on it. An unclosed `{{` counts to the end.
 */
export function countExpressions(source: string): number {
  let count = 0;
  let at = source.indexOf('{{');
  while (at >= 0) {
    const longComment = source.startsWith('{{!--', at);
    const close = longComment ? source.indexOf('--}}', at + 5) : source.indexOf('}}', at + 2);
    const end = close < 0 ? source.length : close;
    if (source[at + 2] !== '!') count += source.slice(at + 2, end).match(TOKEN)?.length ?? 0;
    if (close < 0) break;
    at = source.indexOf('{{', end + 2);
  }
  return count;
}

/** Throws a `TemplateProblem` when the source is too long or has too many expressions. */
export function assertWithinLimits(field: string, source: string, addedChars = 0): void {
  if (source.length - addedChars > TEMPLATE_LIMITS.maxLength)
    throw new TemplateProblem(field, `at most ${TEMPLATE_LIMITS.maxLength} characters`);
  const expressions = countExpressions(source);
  if (expressions > TEMPLATE_LIMITS.maxExpressions)
    throw new TemplateProblem(
      field,
      `at most ${TEMPLATE_LIMITS.maxExpressions} expressions inside {{…}} (names, path segments, literals), found ${expressions}`,
    );
}

type Node = hbs.AST.Node & Record<string, unknown>;

/** The deepest nesting of blocks and sub-expressions in a parsed template (the program itself is 0). */
export function nestingDepth(program: hbs.AST.Program): number {
  let deepest = 0;
  // An explicit stack: a hostile template must not be able to overflow ours while it is measured.
  const stack: [Node, number][] = [[program as unknown as Node, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    const nested = node.type === 'BlockStatement' || node.type === 'SubExpression' ? depth + 1 : depth;
    deepest = Math.max(deepest, nested);
    for (const value of Object.values(node)) {
      for (const child of Array.isArray(value) ? value : [value]) {
        if (child !== null && typeof child === 'object' && typeof (child as Node).type === 'string')
          stack.push([child as Node, nested]);
      }
    }
  }
  return deepest;
}

/** Throws a `TemplateProblem` when blocks or sub-expressions nest deeper than allowed. */
export function assertNesting(field: string, program: hbs.AST.Program): void {
  const depth = nestingDepth(program);
  if (depth > TEMPLATE_LIMITS.maxDepth)
    throw new TemplateProblem(
      field,
      `blocks and sub-expressions nest at most ${TEMPLATE_LIMITS.maxDepth} deep, found ${depth}`,
    );
}

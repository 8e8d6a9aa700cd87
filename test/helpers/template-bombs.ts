/**
 * Templates written to cost as much as possible (docs/decisions/security-template-sandbox.md), for the tests,
 * the hostile corpus and `npm run bench -- template-compile`. Each fits a 64 KiB body (the campaign routes'
 * limit).
 */

/** Inline partials that each call the next one twice: 2^k renders of a 1 KB template. */
const partials = (k: number) =>
  Array.from({ length: k }, (_, i) => `{{#*inline "p${i}"}}{{> p${i + 1}}}{{> p${i + 1}}}{{/inline}}`).join(
    '',
  ) + `{{#*inline "p${k}"}}{{/inline}}{{> p0}}`;

export const TEMPLATE_BOMBS = {
  /** k=22 froze the server 5 s; each level doubles it. */
  partials: partials(22),
  /** A string literal holding `}}` hid the rest of the expression from a syntax counter. */
  logLiteral: `{{log "}}" ${'a.b.c.d '.repeat(7_000)}}}`,
  /** The same without `log`: a built-in helper with thousands of arguments, costly to compile. */
  literal: `{{lookup "}}" ${'a.b.c.d '.repeat(7_000)}}}`,
  /** Blocks within blocks: the compile grows with the square of the depth. */
  deepNesting: '{{#if a}}x'.repeat(1_500) + '{{/if}}'.repeat(1_500),
  /** Loops within loops over a variable the sender passes: its length cubed. */
  loops: '{{#each a}}{{#each ../a}}{{#each ../../a}}x{{/each}}{{/each}}{{/each}}',
} as const;

import { ValidateBy } from 'class-validator';

/**
 * Control characters, line breaks (a CRLF would start a new paragraph or forge a log line) and the marks
 * that reverse the direction of text (which can make a name read as something else).
 */
const CONTROL = /[\p{Cc}\u2028\u2029\u202A-\u202E\u2066-\u2069]/u;
/**
 * What mail clients turn into a link: a scheme (`://`), `www.`, an address or path (`@`, `/`, `\`), or a dot
 * (ASCII, ideographic or full-width) between two letters or digits, as in a domain (`shop.example`).
 */
const LINK_LIKE = /:\/\/|www[.。．｡]|[@/\\]|[\p{L}\p{N}][.。．｡][\p{L}\p{N}]/iu;

/**
 * A name from a public form that may be printed in a mail as it is (docs/api/browser-forms.md "Names in
 * mail"): nothing a mail client would show as a link, no line break. "J. R. R. Tolkien" passes,
 * "www.shop.example", "Ada\r\nVisit…" and "x@y" do not.
 */
export const isPlainName = (name: string): boolean => !CONTROL.test(name) && !LINK_LIKE.test(name);

/** What is wrong with a name that breaks the rule, naming the field. */
export const plainNameMessage = (property: string) =>
  `${property} must be a plain name: no link, domain, @, slash or line break`;

/** A string property that must pass `isPlainName` (public forms: the joinlist's `firstName`). */
export const IsPlainName = () =>
  ValidateBy({
    name: 'isPlainName',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && isPlainName(value),
      defaultMessage: () => plainNameMessage('$property'),
    },
  });

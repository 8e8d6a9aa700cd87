import escapeStringRegexp from 'escape-string-regexp';

/**
 * The regex source that matches `text` literally, for patterns sent to the database: regex characters
 * escaped, and NUL written as `\x00`, because BSON cannot carry a NUL byte inside a pattern (the driver
 * throws, which was a 500 for a search containing one).
 */
export function literalSource(text: string): string {
  return escapeStringRegexp(text).replace(/\0/g, '\\x00');
}

/** Contains `text`, in any case: the search filters of the lists (callers cap the length). */
export function containsText(text: string): RegExp {
  return new RegExp(literalSource(text), 'i');
}

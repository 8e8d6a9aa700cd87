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

/**
 * Matches exactly this e-mail address in any case, for fields stored as the sender typed them (feedback,
 * wants). Such a match cannot use an index; it serves rare operations such as a GDPR erasure.
 */
export function sameAddress(email: string): RegExp {
  return new RegExp(`^${literalSource(email.trim())}$`, 'i');
}

import escapeStringRegexp from 'escape-string-regexp';

/**
 * Matches exactly this e-mail address in any case, for fields stored as the sender typed them (feedback,
 * wants). Such a match cannot use an index; it serves rare operations such as a GDPR erasure.
 */
export function sameAddress(email: string): RegExp {
  return new RegExp(`^${escapeStringRegexp(email.trim())}$`, 'i');
}

import { applyDecorators } from '@nestjs/common';
import { IsString, MaxLength, ValidateBy, type ValidationOptions } from 'class-validator';

/** RFC 5321 limits: a path holds at most 254 characters of address, a local part at most 64. */
export const EMAIL_ADDRESS_MAX = 254;
export const LOCAL_PART_MAX = 64;

/** The name of the rule in class-validator's registry (the OpenAPI pass reads it by this name). */
export const IS_EMAIL_ADDRESS = 'isEmailAddress';

/**
 * RFC 5322 `atext`: printable ASCII without specials, so no quotes, spaces, brackets or control characters.
 */
const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
/** A hostname label: letters, digits and inner hyphens, at most 63 characters. */
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
/** The last label starts with a letter (no top-level domain starts with a digit; `a@1.2.3.4` is refused). */
const TOP_LABEL = '[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';

/**
 * The rule's shape (also the `pattern` of every address in the OpenAPI document, so it avoids lookarounds
 * that schema-driven generators do not read): a dot-atom local part, `@`, two or more hostname labels.
 * The lengths are checked beside it.
 */
export const EMAIL_ADDRESS_PATTERN = new RegExp(`^${ATOM}(?:\\.${ATOM})*@(?:${LABEL}\\.)+${TOP_LABEL}$`);

/**
 * The one address rule of the service (docs/decisions/api-email-address-rule.md): what every request that
 * names an address is checked against, and what the e-mail queue accepts as a recipient. It is deliberately
 * narrower than RFC 5322 (no quoted local parts, comments, IP literals or non-ASCII): every address it
 * accepts can be written into an SMTP envelope and a header as is.
 */
export function isSendableAddress(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length <= EMAIL_ADDRESS_MAX &&
    value.indexOf('@') <= LOCAL_PART_MAX &&
    EMAIL_ADDRESS_PATTERN.test(value)
  );
}

/** What is wrong with an address that breaks the rule, naming the field. */
export const emailAddressMessage = (property: string) =>
  `${property} must be an email address such as name@example.com (no quotes, spaces or control characters)`;

/**
 * A string property that must be a sendable address (`isSendableAddress`), at most 254 characters. The
 * OpenAPI pass documents it as `format: email` with this length and pattern.
 */
export function IsEmailAddress(options: ValidationOptions = {}): PropertyDecorator {
  return applyDecorators(
    IsString(options),
    MaxLength(EMAIL_ADDRESS_MAX, options),
    ValidateBy(
      {
        name: IS_EMAIL_ADDRESS,
        validator: {
          validate: (value: unknown) => isSendableAddress(value),
          defaultMessage: () => emailAddressMessage('$property'),
        },
      },
      options,
    ),
  );
}

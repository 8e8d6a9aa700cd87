import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, type ValidationError, validateSync } from 'class-validator';
import { auditEnv, type AuditEnv } from '../audit/audit.config';
import { authEnv, type AuthEnv } from '../auth/auth.config';
import { chatEnv, type ChatEnv } from '../chat/chat.config';
import { httpEnv, type HttpEnv } from '../common/http/http.config';
import { loggingEnv, type LoggingEnv } from '../common/logging/logging.config';
import { databaseEnv, type DatabaseEnv } from '../database/database.config';
import { emailEnv, type EmailEnv } from '../email/email.config';
import { emailEventsEnv, type EmailEventsEnv } from '../email/events/email-events.config';
import { senderDomainsEnv, type SenderDomainsEnv } from '../sender-domains/sender-domains.config';
import { bouncesEnv, type BouncesEnv } from '../email/bounces/bounces.config';
import { usersEnv, type UsersEnv } from '../users/users.config';
import { appEnv, AppEnv } from './app.config';
import { resolveAppSecret } from './app-secret';
import type { EnvSection } from './env-rules';
import { publicAddressProblems } from './public-addresses';
import { resolve } from 'node:path';

/**
 * Every feature's section of the environment, each declared beside its feature (`<feature>.config.ts`,
 * docs/development.md "Adding a setting"). Their variables and rules are validated together at start, so
 * one start names every bad variable; the order here is the order of the message's lines.
 */
const SECTIONS: readonly EnvSection<object>[] = [
  appEnv,
  httpEnv,
  loggingEnv,
  databaseEnv,
  usersEnv,
  authEnv,
  auditEnv,
  emailEnv,
  emailEventsEnv,
  senderDomainsEnv,
  bouncesEnv,
  chatEnv,
];

/** The environment as the sections declare it, with exactly the names of docs/operations/configuration.md. */
export type Env = AppEnv &
  HttpEnv &
  LoggingEnv &
  DatabaseEnv &
  UsersEnv &
  AuthEnv &
  AuditEnv &
  EmailEnv &
  EmailEventsEnv &
  SenderDomainsEnv &
  BouncesEnv &
  ChatEnv;

/**
 * The validated environment with the master secret resolved. Read it through
 * `ConfigService<AppConfig, true>`: `config.get('PORT', { infer: true })` is a number, never undefined.
 * (Inject `ConfigService` by its class in the constructor: a type alias would lose the DI token.)
 */
export type AppConfig = Omit<Env, 'APP_SECRET'> & { readonly APP_SECRET: string };

/** Thrown at start-up when the environment is invalid; the message names every offending variable. */
export class InvalidEnvironmentError extends Error {}

/**
 * The checks that say what kind of value is expected; when one fails, the range checks after it add nothing.
 */
const TYPE_CHECKS = ['isInt', 'isBoolean', 'isString', 'isIn'];

/**
 * One message for one variable: `PORT=abc` fails isInt, Min and Max at once, and only "must be an integer"
 * helps. Without a failed type check, the first failed rule. class-validator's messages start with the
 * property's name, which the line already shows.
 */
function oneProblem(error: ValidationError): string {
  const constraints = error.constraints ?? {};
  const rule = TYPE_CHECKS.find((name) => name in constraints) ?? Object.keys(constraints)[0];
  const message = constraints[rule] ?? 'is invalid';
  return message.startsWith(`${error.property} `) ? message.slice(error.property.length + 1) : message;
}

/** The variables a section's class declares (each carries at least one validator). */
function declaredNames(schema: new () => object): Set<string> {
  const rules = getMetadataStorage().getTargetValidationMetadatas(schema, '', false, false);
  return new Set(rules.map((rule) => rule.propertyName));
}

/**
 * The master secret (resolveAppSecret), or undefined with the problem added: generating one writes into
 * DATA_DIR, which may still fail where the checks before could not tell (EPERM in /sys as root).
 */
function secretOrProblem(env: Env, problems: string[]): string | null | undefined {
  try {
    return resolveAppSecret(env);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    problems.push(
      `  DATA_DIR: cannot create or write ${resolve(env.DATA_DIR)} (${code}); set DATA_DIR to a directory ` +
        'this user can write',
    );
    return undefined;
  }
}

/**
 * Validates and types the environment (the `validate` of ConfigModule, which merged `.env` under it): a bad
 * value stops the process with a message naming the variable. The result keeps the other variables it was
 * given, as one class over all of them did.
 */
export function validateEnv(raw: Record<string, unknown>): AppConfig {
  const env = plainToInstance(AppEnv, raw, { exposeDefaultValues: true }) as Env;
  const errors = validateSync(env, { skipMissingProperties: false });
  for (const section of SECTIONS.filter((each) => each !== appEnv)) {
    const values = plainToInstance(section.schema, raw, { exposeDefaultValues: true }) as Record<
      string,
      unknown
    >;
    errors.push(...validateSync(values, { skipMissingProperties: false }));
    for (const name of declaredNames(section.schema)) Object.assign(env, { [name]: values[name] });
  }
  const problems = errors.map((error) => `  ${error.property}: ${oneProblem(error)}`);
  const invalid = new Set(errors.map((error) => error.property));
  for (const section of SECTIONS) problems.push(...(section.checks?.(env, invalid) ?? []));
  // Spans two sections (MAIL_FROM, PUBLIC_BASE_URL): no placeholder From or link host in production, since
  // receivers authenticate the one and follow the other (docs/operations/sending-domains.md).
  if (env.NODE_ENV === 'production') problems.push(...publicAddressProblems(env));
  const secret = problems.length === 0 ? secretOrProblem(env, problems) : undefined;
  if (problems.length > 0 || !secret) {
    // One variable fits on the line; several get a line each.
    const listed = problems.length === 1 ? ` ${problems[0].trim()}` : `\n${problems.join('\n')}`;
    throw new InvalidEnvironmentError(`Invalid configuration:${listed}`);
  }
  return Object.assign(env, { APP_SECRET: secret });
}

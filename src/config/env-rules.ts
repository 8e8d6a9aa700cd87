import { ValidateBy } from 'class-validator';
import { validateCronExpression } from 'cron';

/**
 * What each feature's `<feature>.config.ts` shares: the transforms that read a variable's text, and the
 * shape of a section (docs/development.md "Adding a setting").
 */

export const NODE_ENVS = ['development', 'production', 'test'] as const;
export type NodeEnv = (typeof NODE_ENVS)[number];

export const toInt = ({ value }: { value: unknown }) =>
  typeof value === 'string' && value !== '' ? Number(value) : value;
export const toBool = ({ value }: { value: unknown }) =>
  value === 'true' ? true : value === 'false' ? false : value;
export const emptyToUndefined = ({ value }: { value: unknown }) => (value === '' ? undefined : value);

/**
 * A cron expression as `@nestjs/schedule` (the `cron` package) reads it: 5 fields, or 6 with seconds first.
 */
export const IsCronExpression = () =>
  ValidateBy({
    name: 'isCronExpression',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && validateCronExpression(value).valid,
      defaultMessage: () => 'must be a cron expression such as "0 8 * * *" (minute hour day month weekday)',
    },
  });

/**
 * One feature's variables: a class whose properties are the variables (validators and defaults on each),
 * and the rules that span several of them (e.g. "required when NODE_ENV=production"). A check returns one
 * line per problem, `  NAME: message`; `invalid` names the variables that already failed their own rules.
 */
export interface EnvSection<T extends object> {
  readonly schema: new () => T;
  checks?(env: T & { readonly NODE_ENV: NodeEnv }, invalid: ReadonlySet<string>): string[];
}

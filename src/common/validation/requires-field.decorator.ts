import { registerDecorator, type ValidationArguments } from 'class-validator';

/**
 * A field that only means something together with another one (`categoryStatus` qualifies `category`):
 * sending it alone is a 400 naming it, rather than a filter silently ignored.
 */
export function RequiresField(other: string): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'requiresField',
      target: target.constructor,
      propertyName: String(propertyName),
      constraints: [other],
      options: { message: `$property requires ${other}` },
      validator: {
        validate: (value: unknown, args: ValidationArguments) =>
          value === undefined || (args.object as Record<string, unknown>)[other] !== undefined,
      },
    });
  };
}

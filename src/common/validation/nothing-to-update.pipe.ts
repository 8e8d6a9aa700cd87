import { ArgumentMetadata, BadRequestException, Injectable, PipeTransform } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';

export const NOTHING_TO_UPDATE = 'Nothing to update: send at least one field';

/** The fields a DTO declares (from its validation rules), a base class's first. */
function fieldsOf(metatype: ArgumentMetadata['metatype']): string[] {
  const chain: NonNullable<ArgumentMetadata['metatype']>[] = [];
  for (
    let current = metatype;
    current && current !== Object;
    current = Object.getPrototypeOf(current) as typeof metatype
  ) {
    if (typeof current === 'function' && current.name) chain.unshift(current);
  }
  const storage = getMetadataStorage();
  const rules = chain.flatMap((type) => storage.getTargetValidationMetadatas(type, '', false, false));
  return [...new Set(rules.map((rule) => rule.propertyName))];
}

/**
 * For PATCH bodies (`@Body(NothingToUpdatePipe)`): a body without a single field is a 400 rather than a
 * silent no-op that still answers "updated". It runs after the global ValidationPipe, so it sees the DTO;
 * a field sent as `null` counts (it clears the field).
 */
@Injectable()
export class NothingToUpdatePipe implements PipeTransform {
  transform<T>(value: T, metadata?: ArgumentMetadata): T {
    const sent =
      value !== null && typeof value === 'object' && Object.values(value).some((v) => v !== undefined);
    if (sent) return value;
    const fields = fieldsOf(metadata?.metatype);
    throw new BadRequestException(
      fields.length > 0 ? `Nothing to update: send at least one of ${fields.join(', ')}` : NOTHING_TO_UPDATE,
    );
  }
}

import { BadRequestException, Injectable, PipeTransform } from '@nestjs/common';

export const NOTHING_TO_UPDATE = 'Nothing to update: send at least one field';

/**
 * For PATCH bodies (`@Body(NothingToUpdatePipe)`): a body without a single field is a 400 rather than a
 * silent no-op that still answers "updated". It runs after the global ValidationPipe, so it sees the DTO;
 * a field sent as `null` counts (it clears the field).
 */
@Injectable()
export class NothingToUpdatePipe implements PipeTransform {
  transform<T>(value: T): T {
    const sent =
      value !== null && typeof value === 'object' && Object.values(value).some((v) => v !== undefined);
    if (!sent) throw new BadRequestException(NOTHING_TO_UPDATE);
    return value;
  }
}

import {
  type ArgumentMetadata,
  BadRequestException,
  HttpException,
  Logger,
  ValidationPipe,
} from '@nestjs/common';

/**
 * class-transformer throws a TypeError on some shapes a DTO does not expect (an array where a nested object
 * is declared: "newValue.push is not a function"); that is bad input, not a server error.
 */
class ShapeSafeValidationPipe extends ValidationPipe {
  private readonly logger = new Logger('Validation');

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    // A DTO describes an object: class-transformer would turn an array into an array of "instances" that
    // validation passes and update pipes take for fields (`[]` reached the database as a `$set`).
    if (Array.isArray(value) && metadata.type === 'body' && this.toValidate(metadata)) {
      throw new BadRequestException('The body must be a JSON object');
    }
    try {
      return (await super.transform(value, metadata)) as unknown;
    } catch (error) {
      if (error instanceof HttpException) throw error;
      this.logger.debug({ err: error, type: metadata.type }, 'Input refused by the transformer');
      throw new BadRequestException(`The ${metadata.type} does not have the expected shape`);
    }
  }
}

/**
 * The validation every input gets (docs/architecture.md "Global validation"): fields a DTO does not declare
 * are a 400, and handlers receive DTO instances with their transforms applied. The global pipe (APP_PIPE) and
 * the multipart form reader build theirs here, so a form field is checked exactly like a JSON one.
 */
export function createValidationPipe(): ValidationPipe {
  return new ShapeSafeValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true });
}

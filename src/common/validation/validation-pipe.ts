import { ValidationPipe } from '@nestjs/common';

/**
 * The validation every input gets (DESIGN "Global validation"): fields a DTO does not declare are a 400,
 * and handlers receive DTO instances with their transforms applied. The global pipe (APP_PIPE) and the
 * multipart form reader build theirs here, so a form field is checked exactly like a JSON one.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true });
}

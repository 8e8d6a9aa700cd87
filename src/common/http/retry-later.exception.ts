import { HttpException, HttpStatus } from '@nestjs/common';

/**
 * A 429 decided outside the throttler guard (which sets its own header): the exception filter answers it
 * with `Retry-After` in seconds, like every other 429 of the service.
 */
export class RetryLaterException extends HttpException {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message, HttpStatus.TOO_MANY_REQUESTS);
  }
}

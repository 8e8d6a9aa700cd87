import { HttpException, HttpStatus } from '@nestjs/common';

/**
 * A 429 decided outside the throttler guard (which sets its own header), or a 503 that knows when to come
 * back: the exception filter answers it with `Retry-After` in seconds, like every other 429 of the service.
 */
export class RetryLaterException extends HttpException {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    status: HttpStatus.TOO_MANY_REQUESTS | HttpStatus.SERVICE_UNAVAILABLE = HttpStatus.TOO_MANY_REQUESTS,
  ) {
    super(message, status);
  }
}

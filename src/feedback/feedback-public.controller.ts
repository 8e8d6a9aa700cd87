import { Body, Controller, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/auth/public.decorator';
import { ok } from '../common/http/envelope';
import { ApiErrors, ApiOkEnvelope } from '../common/swagger/envelope.decorators';
import { CreateFeedbackDto, FeedbackView, toFeedbackView } from './dto/feedback.dto';
import { FeedbackService } from './feedback.service';
import { AcceptsBody, PUBLIC_BODY_BYTES } from '../common/http/body/body-policy';
import { RouteLimit } from '../common/http/rate-limit';

/** Submissions per minute per client IP: anonymous input, so tighter than the global limit. */
const SUBMIT_RATE_LIMIT = 10;

@ApiTags('Feedback')
@Controller(':appId/feedback')
export class FeedbackPublicController {
  constructor(private readonly feedback: FeedbackService) {}

  @Post()
  @AcceptsBody({ maxBytes: PUBLIC_BODY_BYTES })
  @Public()
  @RouteLimit(SUBMIT_RATE_LIMIT)
  @ApiOperation({ operationId: 'submitFeedback', summary: 'Send anonymous feedback to an active app' })
  @ApiOkEnvelope(FeedbackView, { status: HttpStatus.CREATED })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND, HttpStatus.TOO_MANY_REQUESTS)
  async submit(@Param('appId') appId: string, @Body() dto: CreateFeedbackDto) {
    return ok(toFeedbackView(await this.feedback.submit(appId, dto)));
  }
}

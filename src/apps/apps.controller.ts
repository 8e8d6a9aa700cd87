import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../common/auth/authenticated.decorator';
import { Access } from '../common/auth/roles';
import { ok } from '../common/http/envelope';
import { ApiOkEnvelope } from '../common/swagger/envelope.decorators';
import { AppsService } from './apps.service';
import { PublicAppView, toPublicAppView } from './dto/app.dto';

@ApiTags('Apps')
@Controller('apps')
export class AppsController {
  constructor(private readonly apps: AppsService) {}

  @Get()
  @Authenticated(Access.SignedIn)
  @ApiOperation({
    operationId: 'listActiveApps',
    summary: 'Active apps, for the app switcher of any signed-in user',
  })
  @ApiOkEnvelope(PublicAppView, { isArray: true })
  async list() {
    return ok((await this.apps.list({ activeOnly: true })).map(toPublicAppView));
  }
}

import { Controller, Get, HttpCode, Module, Post } from '@nestjs/common';
import { ApiKeyAuth, ApiKeyPrincipal, CurrentApiKey } from '../../src/common/auth/api-key-auth.decorator';
import { AppKeyAuth, CurrentApp } from '../../src/common/auth/app-key-auth.decorator';
import type { App } from '../../src/apps/schemas/app.schema';
import { ok } from '../../src/common/http/envelope';

/**
 * Test-only routes, one per client credential decorator, mounted in a module of their own that imports
 * nothing: it proves the guards resolve their dependencies wherever the decorators are used.
 */
@Controller('__guards')
class GuardsProbeController {
  @Get(':appId/key-route')
  @ApiKeyAuth()
  keyRoute(@CurrentApiKey() apiKey: ApiKeyPrincipal) {
    return ok(apiKey);
  }

  @Get('key-route')
  @ApiKeyAuth()
  keyRouteWithoutApp(@CurrentApiKey() apiKey: ApiKeyPrincipal) {
    return ok(apiKey);
  }

  @Post('app-route')
  @HttpCode(200)
  @AppKeyAuth()
  appRoute(@CurrentApp() app: App) {
    return ok({ appId: app.id });
  }
}

@Module({ controllers: [GuardsProbeController] })
export class GuardsProbeModule {}

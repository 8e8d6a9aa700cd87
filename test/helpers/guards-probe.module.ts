import { Controller, Get, HttpCode, Module, Post } from '@nestjs/common';
import { ApiKeyAuth, ApiKeyPrincipal, CurrentApiKey } from '../../src/common/auth/api-key-auth.decorator';
import { AppKeyAuth, CurrentApp } from '../../src/common/auth/app-key-auth.decorator';
import { CurrentEndUser, EndUser, EndUserPrincipal } from '../../src/common/auth/end-user.decorator';
import { SignedWebhook, WebhookSignature } from '../../src/common/auth/webhook-signature.decorator';
import type { VerifiedWebhook } from '../../src/email/events/providers/provider-format';
import type { App } from '../../src/apps/schemas/app.schema';
import { ok } from '../../src/common/http/envelope';

/**
 * Test-only routes, one per client credential decorator, mounted in a module of their own that imports
 * nothing: it proves the one global guard runs each credential's strategy wherever the decorators are used.
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

  @Get('end-user')
  @EndUser()
  endUserRoute(@CurrentEndUser() user: EndUserPrincipal) {
    return ok(user);
  }

  @Get(':appId/end-user')
  @EndUser()
  endUserAppRoute(@CurrentEndUser() user: EndUserPrincipal) {
    return ok(user);
  }

  @Post('webhook')
  @HttpCode(200)
  @WebhookSignature()
  webhook(@SignedWebhook() message: VerifiedWebhook) {
    return ok(message);
  }
}

@Module({ controllers: [GuardsProbeController] })
export class GuardsProbeModule {}

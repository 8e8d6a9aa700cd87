import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { JwtModule } from '@nestjs/jwt';
import { ContactsModule } from '../contacts/contacts.module';
import { UsersModule } from '../users/users.module';
import { AuthController } from './auth.controller';
import { AuthService } from './auth.service';
import { BearerStrategy } from './bearer.strategy';
import { EndUserTokenService } from './end-user/end-user-token.service';
import { EndUserStrategy } from './end-user/end-user.strategy';
import { jwtOptions } from './jwt-options';
import { TokenService } from './token.service';
import { TwoFactorController } from './two-factor/two-factor.controller';
import { TwoFactorService } from './two-factor/two-factor.service';

/**
 * Back-office login and tokens, and end-user tokens; the two bearer strategies register their checks here.
 */
@Module({
  imports: [
    JwtModule.registerAsync({ inject: [ConfigService], useFactory: jwtOptions }),
    UsersModule,
    // The end-user strategy checks the person's token version on every request.
    ContactsModule,
  ],
  controllers: [AuthController, TwoFactorController],
  providers: [
    AuthService,
    TwoFactorService,
    TokenService,
    BearerStrategy,
    EndUserTokenService,
    EndUserStrategy,
  ],
  exports: [TokenService, EndUserTokenService],
})
export class AuthModule {}

import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsString, Matches, MaxLength } from 'class-validator';
import { SECOND_FACTOR_CODE, SECOND_FACTOR_MESSAGE } from '../two-factor/code-format';
import { Omittable } from '../../common/validation/omittable.decorator';
import { ROLES } from '../../common/auth/roles';
import { PasswordDto } from '../../users/dto/user-input.dto';
import { IsEmailAddress } from '../../common/validation/email-address';

export class LoginDto {
  @ApiProperty({ format: 'email' }) @IsEmailAddress() email: string;
  @ApiProperty() @IsString() @IsNotEmpty() @MaxLength(72) password: string;

  @ApiPropertyOptional({
    description:
      'With two-factor sign-in on: the 6-digit code of the authenticator app, or an unused recovery code. ' +
      'Without it the answer is 401 with `twoFactorRequired: true`; ignored for users without two-factor.',
  })
  @Omittable()
  @IsString()
  @MaxLength(24)
  @Matches(SECOND_FACTOR_CODE, { message: SECOND_FACTOR_MESSAGE })
  code?: string;
}

export class HashPasswordDto extends PasswordDto {}

export class TeamUser {
  @ApiProperty() id: string;
  @ApiProperty({ format: 'email' }) email: string;
  @ApiProperty({ description: '`firstName lastName`' }) name: string;
  @ApiProperty({ enum: ROLES }) role: string;
  @ApiPropertyOptional({
    description: 'Present (true) when the role requires two-factor sign-in and it is not set up yet',
  })
  twoFactorSetupRequired?: boolean;
}

export class TokenResponse {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty({ description: 'Bearer token (HS256 JWT)' }) token: string;
  @ApiProperty() user: TeamUser;
}

export class MeResponse {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty() user: TeamUser;
}

export class HashResponse {
  @ApiProperty({ description: 'bcrypt hash' }) hash: string;
}

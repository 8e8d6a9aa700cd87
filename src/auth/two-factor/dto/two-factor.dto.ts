import { ApiProperty } from '@nestjs/swagger';
import { IsString, Matches, MaxLength } from 'class-validator';
import { TeamUser } from '../../dto/auth.dto';
import { SECOND_FACTOR_CODE, SECOND_FACTOR_MESSAGE } from '../code-format';

export class TwoFactorCodeDto {
  @ApiProperty({ description: 'The 6-digit code the authenticator app shows now', example: '123456' })
  @IsString()
  @MaxLength(24)
  @Matches(/^\s*\d{6}\s*$/, { message: 'code must be the 6 digits the authenticator app shows' })
  code: string;
}

export class SecondFactorCodeDto {
  @ApiProperty({ description: 'A 6-digit TOTP code, or one of the recovery codes', example: '123456' })
  @IsString()
  @MaxLength(24)
  @Matches(SECOND_FACTOR_CODE, { message: SECOND_FACTOR_MESSAGE })
  code: string;
}

export class TwoFactorSetupView {
  @ApiProperty({ description: 'The base32 secret, to type into an authenticator app by hand' })
  secret: string;
  @ApiProperty({ description: 'The `otpauth://totp/…` URI an authenticator app reads' }) otpauthUri: string;
  @ApiProperty({ description: 'The URI as a QR code: a `data:image/png;base64,…` URL' }) qrCode: string;
}

export class TwoFactorSetupResponse {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty() data: TwoFactorSetupView;
  @ApiProperty() message: string;
}

export class TwoFactorEnabledResponse {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty({
    description: 'Ten one-time recovery codes, shown only now; each signs in once in place of a TOTP code',
    type: [String],
  })
  recoveryCodes: string[];
  @ApiProperty({ description: 'A new bearer token: enabling ends the tokens issued before' }) token: string;
  @ApiProperty() user: TeamUser;
}

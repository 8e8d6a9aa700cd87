import { ApiProperty } from '@nestjs/swagger';
import { IsNotEmpty, IsString, Matches, MaxLength } from 'class-validator';
import { APP_ID_MAX_LENGTH } from '../../../apps/dto/app-input.dto';
import { APP_ID_PATTERN } from '../../../apps/schemas/app.schema';
import { IsEmailAddress } from '../../../common/validation/email-address';

export class RequestMagicLinkDto {
  @ApiProperty({ format: 'email', maxLength: 254, description: 'Where the sign-in link goes' })
  @IsEmailAddress()
  email: string;

  @ApiProperty({ example: 'my-shop', maxLength: APP_ID_MAX_LENGTH, description: 'The app to sign in to' })
  @IsString()
  @MaxLength(APP_ID_MAX_LENGTH)
  @Matches(APP_ID_PATTERN, { message: 'appId must be an app id (lower-case letters, digits and -)' })
  appId: string;
}

export class VerifyMagicLinkDto {
  @ApiProperty({
    example: 'kq3Z6d0x1mS8v2b7yQ5wN4tE9rU0iO3pA6sD8fG1hJ2',
    maxLength: 512,
    description: 'The `token` query parameter of the link in the e-mail',
  })
  @IsString()
  @IsNotEmpty()
  @MaxLength(512)
  token: string;
}

/** The signed-in end user: the person record and the app (docs/architecture.md "Magic link"). */
export class EndUserView {
  @ApiProperty({ description: "The person's id (the contact id)", example: '665f1c0a9d3e4b2a1c0d9e8f' })
  id: string;
  @ApiProperty({ format: 'email' }) email: string;
  @ApiProperty({ example: 'my-shop' }) appId: string;
}

/** Shaped like the login answer (`token` and `user` beside `success`, as the API contract writes both). */
export class EndUserSessionResponse {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty({
    description:
      'Token of the end user (HS256 JWT, audience `end-user`, lifetime JWT_EXPIRES_IN): send it as ' +
      '`X-End-User-Token: …` where an end user is expected (the wants routes, as the voter)',
  })
  token: string;
  @ApiProperty() user: EndUserView;
}

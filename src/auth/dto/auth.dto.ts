import { ApiProperty } from '@nestjs/swagger';
import { IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { ROLES } from '../../common/auth/roles';
import { PasswordDto } from '../../users/dto/user-input.dto';
import { IsEmailAddress } from '../../common/validation/email-address';

export class LoginDto {
  @ApiProperty({ format: 'email' }) @IsEmailAddress() email: string;
  @ApiProperty() @IsString() @IsNotEmpty() @MaxLength(72) password: string;
}

export class HashPasswordDto extends PasswordDto {}

export class TeamUser {
  @ApiProperty() id: string;
  @ApiProperty({ format: 'email' }) email: string;
  @ApiProperty({ description: '`firstName lastName`' }) name: string;
  @ApiProperty({ enum: ROLES }) role: string;
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

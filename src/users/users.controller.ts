import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  Patch,
  Post,
  Query,
} from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../common/auth/authenticated.decorator';
import { AuthUser, CurrentUser } from '../common/auth/current-user.decorator';
import { Access } from '../common/auth/roles';
import { done, ok } from '../common/http/envelope';
import {
  ApiDoneEnvelope,
  ApiErrorMessage,
  ApiErrors,
  ApiOkEnvelope,
} from '../common/swagger/envelope.decorators';
import { CreateUserDto, ListUsersQuery, PasswordDto, UpdateUserDto } from './dto/user-input.dto';
import { toUserView, UserView } from './dto/user.dto';
import { LAST_ADMIN_MESSAGE, UsersService } from './users.service';
import { StaffCredentialsService } from './staff-credentials.service';
import { NothingToUpdatePipe } from '../common/validation/nothing-to-update.pipe';
import { duplicateRecordMessage } from '../common/http/all-exceptions.filter';

@ApiTags('Users')
@Controller('users')
@Authenticated(Access.Admin)
export class UsersController {
  constructor(
    private readonly users: UsersService,
    private readonly credentials: StaffCredentialsService,
  ) {}

  @Get()
  @Authenticated(Access.Read)
  @ApiOperation({ operationId: 'listUsers', summary: 'List admin users (no pagination)' })
  @ApiOkEnvelope(UserView, { isArray: true })
  @ApiErrors(HttpStatus.BAD_REQUEST)
  async list(@Query() query: ListUsersQuery) {
    return ok((await this.users.list(query)).map(toUserView));
  }

  @Post()
  @ApiOperation({ operationId: 'createUser', summary: 'Create an admin user' })
  @ApiOkEnvelope(UserView, { status: HttpStatus.CREATED, message: 'User created' })
  @ApiErrors(HttpStatus.BAD_REQUEST)
  @ApiErrorMessage(HttpStatus.CONFLICT, duplicateRecordMessage(['email']))
  async create(@Body() dto: CreateUserDto) {
    return ok(toUserView(await this.users.create(dto)), 'User created');
  }

  @Get(':id')
  @Authenticated(Access.Read)
  @ApiOperation({ operationId: 'getUser', summary: 'Get an admin user' })
  @ApiOkEnvelope(UserView)
  @ApiErrors(HttpStatus.NOT_FOUND)
  async get(@Param('id') id: string) {
    return ok(toUserView(await this.users.get(id)));
  }

  @Patch(':id')
  @ApiOperation({
    operationId: 'updateUser',
    summary: 'Update profile, settings, role or active flag (409 for the last active admin)',
  })
  @ApiOkEnvelope(UserView, { message: 'User updated' })
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND)
  @ApiErrorMessage(HttpStatus.CONFLICT, LAST_ADMIN_MESSAGE)
  async update(@Param('id') id: string, @Body(NothingToUpdatePipe) dto: UpdateUserDto) {
    return ok(toUserView(await this.users.update(id, dto)), 'User updated');
  }

  @Delete(':id')
  @ApiOperation({
    operationId: 'deactivateUser',
    summary: 'Deactivate an admin user (soft delete; 409 for the last active admin)',
  })
  @ApiDoneEnvelope('User deactivated')
  @ApiErrors(HttpStatus.NOT_FOUND)
  @ApiErrorMessage(HttpStatus.CONFLICT, LAST_ADMIN_MESSAGE)
  async remove(@Param('id') id: string) {
    await this.users.deactivate(id);
    return done('User deactivated');
  }

  @Patch(':id/password')
  @HttpCode(HttpStatus.OK)
  @Authenticated(Access.SignedIn)
  @ApiOperation({
    operationId: 'changeUserPassword',
    summary: "Change a user's password (admins: anyone's; others: their own)",
  })
  @ApiDoneEnvelope('Password updated')
  @ApiErrors(HttpStatus.BAD_REQUEST, HttpStatus.FORBIDDEN, HttpStatus.NOT_FOUND)
  async changePassword(@CurrentUser() caller: AuthUser, @Param('id') id: string, @Body() dto: PasswordDto) {
    await this.users.changePassword(caller, id, dto.password);
    return done('Password updated');
  }

  @Post(':id/sessions/revoke')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    operationId: 'revokeUserSessions',
    summary: 'End every token of a user, on every instance at its next request (admins only)',
  })
  @ApiDoneEnvelope('Sessions ended')
  @ApiErrors(HttpStatus.NOT_FOUND)
  async revokeSessions(@Param('id') id: string) {
    await this.users.get(id);
    await this.credentials.endAllSessions(id);
    return done('Sessions ended');
  }

  @Post(':id/2fa/reset')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    operationId: 'resetUserTwoFactor',
    summary: "Remove a user's two-factor sign-in (a lost phone) and end their tokens (admins only)",
  })
  @ApiDoneEnvelope('Two-factor sign-in reset')
  @ApiErrors(HttpStatus.NOT_FOUND)
  async resetTwoFactor(@Param('id') id: string) {
    await this.users.get(id);
    await this.credentials.removeFactor(id, true);
    return done('Two-factor sign-in reset');
  }
}

import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { DeploymentFeatures } from '../database/deployment-features';
import { AdminBootstrapService } from './admin-bootstrap.service';
import { User, UserSchema } from './schemas/user.schema';
import { UsersController } from './users.controller';
import { UsersService } from './users.service';
import { StaffCredentialsService } from './staff-credentials.service';

@Module({
  imports: [MongooseModule.forFeature([{ name: User.name, schema: UserSchema }])],
  controllers: [UsersController],
  providers: [UsersService, StaffCredentialsService, AdminBootstrapService, DeploymentFeatures],
  exports: [UsersService, StaffCredentialsService],
})
export class UsersModule {}

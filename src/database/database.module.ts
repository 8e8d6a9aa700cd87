import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import mongoose from 'mongoose';
import { Env } from '../config/env';

// Operators inside user-supplied filter values ({"email":{"$gt":""}}) are neutralised by Mongoose; service
// code that builds its own operator queries wraps them in `mongoose.trusted()`.
mongoose.set('sanitizeFilter', true);
// Unknown query fields are an error in our code, never something to silently drop.
mongoose.set('strictQuery', 'throw');

@Module({
  imports: [
    MongooseModule.forRootAsync({
      inject: [Env],
      useFactory: (env: Env) => {
        if (!env.MONGODB_URI) {
          throw new Error(
            'MONGODB_URI is not set (main.ts starts the embedded dev database when it is unset)',
          );
        }
        return {
          uri: env.MONGODB_URI,
          // Fail requests fast when the database is gone instead of queueing them for 30 s.
          serverSelectionTimeoutMS: 5_000,
          // Declared indexes are created at start-up; production may turn this off and build them ahead.
          autoIndex: true,
        };
      },
    }),
  ],
})
export class DatabaseModule {}

/**
 * Staff accountability benchmark: the audit write per staff request (round trips, µs) and login with 2FA.
 *
 *   npm run bench -- audit
 *   BENCH_ITERATIONS=500 npm run bench -- audit        (default 300 per scenario)
 *
 * In process, on one in-memory dev database (its speed is not MongoDB's: read the figures as relative):
 * - `audit write`: what the audit interceptor adds to one audited request, the intent insert before the
 *   handler and the chained record plus intent delete after it (AuditTrail.begin + finish), sequentially;
 * - `audit write, 2 writers`: the same from two trails at once (two instances on one chain), so each often
 *   guesses a stale tip and pays a duplicate key and a read;
 * - `login`, `login + TOTP`: AuthService.login with a password alone, and with a TOTP code (the code check:
 *   one read of the sealed secret, AES-GCM open, HMAC, the conditional step write), at BCRYPT_COST=4 so the
 *   password hash does not drown the difference.
 * Round trips are counted by driver command monitoring; times are wall-clock means per operation.
 */
import { getConnectionToken, getModelToken } from '@nestjs/mongoose';
import { NestFactory } from '@nestjs/core';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommandStartedEvent } from 'mongodb';
import type { Connection, Model } from 'mongoose';
import { startDevDatabase, withDatabaseName } from '../src/database/dev-database';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 300);
/** Logins per scenario (the per-IP limit is the HTTP layer's, not measured here). */
const LOGINS = 20;

async function main(): Promise<void> {
  const database = await startDevDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'audit-bench-'));
  Object.assign(process.env, {
    MONGODB_URI: `${withDatabaseName(database.uri, 'bench_audit')}?monitorCommands=true`,
    EMAIL_WORKER_ENABLED: 'false',
    CHAT_WORKER_ENABLED: 'false',
    LOG_LEVEL: 'warn',
    BCRYPT_COST: '4',
    DATA_DIR: dataDir,
    APP_SECRET: randomBytes(32).toString('hex'),
  });
  const { AppModule } = await import('../src/app.module');
  const { AuditTrail } = await import('../src/audit/audit-trail.service');
  const { AuditRecord } = await import('../src/audit/schemas/audit-record.schema');
  const { AuditIntent } = await import('../src/audit/schemas/audit-intent.schema');
  const { AuthService } = await import('../src/auth/auth.service');
  const { TwoFactorService } = await import('../src/auth/two-factor/two-factor.service');
  const { UsersService } = await import('../src/users/users.service');
  const { crypto } = await import('@otplib/plugin-crypto-node');
  const { generate } = await import('@otplib/totp');

  const app = await NestFactory.createApplicationContext(await AppModule.forRoot(), { logger: ['warn'] });
  await app.init();
  try {
    const connection = app.get<Connection>(getConnectionToken());
    await Promise.all(Object.values(connection.models).map((model) => model.init()));
    let commands = 0;
    connection.getClient().on('commandStarted', (_event: CommandStartedEvent) => (commands += 1));

    const measure = async (label: string, operations: number, run: () => Promise<void>) => {
      commands = 0;
      const started = performance.now();
      await run();
      const micros = ((performance.now() - started) * 1000) / operations;
      console.log(
        `${label.padEnd(26)} ${(commands / operations).toFixed(2).padStart(6)} round trips  ` +
          `${micros.toFixed(0).padStart(7)} µs each  (${operations} operations)`,
      );
    };

    const trail = app.get(AuditTrail);
    const entry = { action: 'bench.write', fields: ['name'], outcome: 'done' as const, status: 200 };
    const audited = async (t: InstanceType<typeof AuditTrail>) => {
      const intent = await t.begin({ action: 'bench.write', requestId: 'bench' });
      await t.finish(intent, entry);
    };
    await audited(trail);
    await measure('audit write', ITERATIONS, async () => {
      for (let i = 0; i < ITERATIONS; i += 1) await audited(trail);
    });
    const other = new AuditTrail(
      app.get<Model<InstanceType<typeof AuditRecord>>>(getModelToken(AuditRecord.name)),
      app.get<Model<InstanceType<typeof AuditIntent>>>(getModelToken(AuditIntent.name)),
    );
    await measure('audit write, 2 writers', ITERATIONS * 2, async () => {
      await Promise.all(
        [trail, other].map(async (t) => {
          for (let i = 0; i < ITERATIONS; i += 1) await audited(t);
        }),
      );
    });

    const users = app.get(UsersService);
    const auth = app.get(AuthService);
    const password = 'bench-password-1';
    const plain = await users.create({ email: 'plain@example.com', password, firstName: 'P', lastName: 'B' });
    const twoFactor = app.get(TwoFactorService);
    const step = Math.floor(Date.now() / 30_000);
    // One account per TOTP login: a code is accepted once, and an account takes 10 code attempts a window.
    const enrolled: string[] = [];
    const codes: string[] = [];
    for (let i = 0; i < LOGINS; i += 1) {
      const user = await users.create({
        email: `totp${i}@example.com`,
        password,
        firstName: 'T',
        lastName: 'B',
      });
      const caller = { id: String(user._id), email: user.email, name: 'T B', role: user.role };
      const bytes = base32Bytes((await twoFactor.setup(caller)).secret);
      await twoFactor.enable(caller, await generate({ secret: bytes, crypto, epoch: (step - 1) * 30 }));
      enrolled.push(user.email);
      codes.push(await generate({ secret: bytes, crypto, epoch: step * 30 }));
    }
    await measure('login', LOGINS, async () => {
      for (let i = 0; i < LOGINS; i += 1) await auth.login({ email: plain.email, password }, () => undefined);
    });
    await measure('login + TOTP', LOGINS, async () => {
      for (let i = 0; i < LOGINS; i += 1) {
        await auth.login({ email: enrolled[i], password, code: codes[i] }, () => undefined);
      }
    });
  } finally {
    await app.close();
    await database.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The bytes of a base32 secret (what the authenticator app holds). */
function base32Bytes(secret: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const char of secret) bits += alphabet.indexOf(char).toString(2).padStart(5, '0');
  return Buffer.from(bits.match(/.{8}/g)!.map((byte) => parseInt(byte, 2)));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

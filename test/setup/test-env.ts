import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  recordOnlyInApplicationScope,
  registerQueryShapeRecorder,
} from '../query-shapes/query-shape-recorder';

/**
 * Runs before each test file's imports: a database of its own on the shared dev server, a fixed secret,
 * quiet logs, a private DATA_DIR and no background e-mail or chat worker unless a test starts one.
 */
const base = process.env.TEST_MONGODB_BASE_URI;
if (base) {
  const name = `test_${process.env.JEST_WORKER_ID ?? '0'}_${randomBytes(4).toString('hex')}`;
  process.env.MONGODB_URI = `${base}/${name}`;
}
process.env.NODE_ENV = 'test';
process.env.APP_SECRET = 'test-secret-that-is-at-least-thirty-two-characters-long';
process.env.LOG_LEVEL = process.env.TEST_LOG_LEVEL ?? 'silent';
process.env.DATA_DIR = join(tmpdir(), `admin-service-test-${randomBytes(4).toString('hex')}`);
process.env.EMAIL_WORKER_ENABLED = 'false';
// The default sender domain: tests' app and template senders are on example.com (sending-identities.ts).
process.env.MAIL_FROM = 'Admin Service <no-reply@example.com>';
process.env.CHAT_WORKER_ENABLED = 'false';
// bcrypt's lowest cost: a hash takes about 1 ms instead of 250.
process.env.BCRYPT_COST = '4';
// Tests name the client IP with X-Forwarded-For (per-IP throttling, voter identity).
process.env.TRUST_PROXY = 'true';
// The index-coverage gate judges the application's queries, not a test's own checks on the same connection:
// test/helpers run requests, service calls and start-up in the application's scope.
registerQueryShapeRecorder();
recordOnlyInApplicationScope();

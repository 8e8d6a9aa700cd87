import { load } from 'js-yaml';
import { MongoClient } from 'mongodb';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { databaseNameOf } from '../src/config/mongodb-uri';

/**
 * Docker is not available where the tests run, so the compose file is checked as text and YAML: the
 * replica set's name, the health check that initiates it, and the connection string of the services that
 * wait for it must agree (docs/operations/running-on-mongodb.md).
 */

interface Service {
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[]; interval: string; timeout: string; retries: number; start_period?: string };
}

interface ComposeFile {
  services: Record<string, Service>;
}

const text = readFileSync(join(__dirname, '..', 'docker', 'docker-compose.yml'), 'utf8');
const compose = load(text) as ComposeFile;
const { api, indexes, mongo } = compose.services;

/** What compose makes of `${NAME:-default}` with NAME unset: the default. */
function withVariablesUnset(value: string): string {
  return value.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1');
}

const uri = withVariablesUnset(api.environment!.MONGODB_URI);
const replSet = mongo.command![mongo.command!.indexOf('--replSet') + 1];
const healthScript = mongo.healthcheck!.test.at(-1)!;

/**
 * Runs the health check's script as mongosh would, against a member in the given state (`rs` and `db` are
 * the shell's helpers, answering as MongoDB 7 does), and says what it did.
 */
function runHealthCheck(state: 'fresh' | 'secondary' | 'primary' | 'unreachable') {
  const initiated: unknown[] = [];
  let exitCode: number | undefined;
  const rs = {
    status() {
      if (state === 'unreachable') throw new Error('connect ECONNREFUSED');
      if (state === 'fresh') {
        throw Object.assign(new Error('no replset config has been received'), {
          codeName: 'NotYetInitialized',
        });
      }
      return { ok: 1 };
    },
    initiate(config: unknown) {
      initiated.push(config);
      return { ok: 1 };
    },
  };
  const db = { hello: () => ({ isWritablePrimary: state === 'primary' }) };
  const quit = (code: number) => {
    exitCode ??= code;
  };
  let thrown: unknown;
  try {
    runInNewContext(healthScript, { rs, db, quit });
  } catch (error) {
    thrown = error;
  }
  return { initiated, exitCode, thrown };
}

describe('docker/docker-compose.yml', () => {
  it('runs MongoDB as a replica set, named in the connection string of both services that use it', () => {
    expect(replSet).toBe('rs0');
    expect(indexes.environment!.MONGODB_URI).toBe(api.environment!.MONGODB_URI);
    // The driver's own reading of the default (no connection is made).
    const client = new MongoClient(uri);
    expect(client.options.replicaSet).toBe(replSet);
    expect(client.options.hosts.map(String)).toEqual(['mongo:27017']);
    expect(databaseNameOf(uri)).toBe('admin-service');
    expect(client.options.retryWrites).toBe(true);
  });

  it('initiates the set with the member host the services reach it by', () => {
    const { initiated } = runHealthCheck('fresh');
    expect(initiated).toEqual([{ _id: replSet, members: [{ _id: 0, host: 'mongo:27017' }] }]);
  });

  it.each<['fresh' | 'secondary' | 'primary', boolean, number]>([
    ['fresh', true, 1],
    ['secondary', false, 1],
    ['primary', false, 0],
  ])('health check on a %s member: initiates %s, exits %s', (state, initiates, exitCode) => {
    const result = runHealthCheck(state);
    expect(result.initiated.length > 0).toBe(initiates);
    expect(result.exitCode).toBe(exitCode);
    expect(result.thrown).toBeUndefined();
  });

  it('fails the health check (never initiates) when the member cannot answer', () => {
    const result = runHealthCheck('unreachable');
    expect(result.initiated).toEqual([]);
    expect(result.thrown).toBeInstanceOf(Error);
  });

  it('hands the script to mongosh intact: no `$` for compose to interpolate, exec form', () => {
    expect(mongo.healthcheck!.test.slice(0, 5)).toEqual([
      'CMD',
      'mongosh',
      '--quiet',
      '--eval',
      healthScript,
    ]);
    expect(healthScript).not.toMatch(/\$/);
    expect(mongo.healthcheck!.start_period).toBeDefined();
  });

  it('starts the index run and the api only once the primary is writable, and the api after the indexes', () => {
    expect(indexes.depends_on).toEqual({ mongo: { condition: 'service_healthy' } });
    expect(indexes.command).toEqual(['node', 'dist/cli/db-indexes.js']);
    expect(api.depends_on).toEqual({
      mongo: { condition: 'service_healthy' },
      indexes: { condition: 'service_completed_successfully' },
    });
  });
});

describe('docker/docker-compose.yml: the secret and the way in', () => {
  it('refuses to start either service without APP_SECRET, naming where it goes', () => {
    for (const service of [api, indexes]) {
      expect(service.environment!.APP_SECRET).toMatch(/^\$\{APP_SECRET:\?.*docker\/\.env/);
    }
  });

  it('passes on the admin settings and the mail transport the service needs in production', () => {
    expect(api.environment).toMatchObject({
      ADMIN_EMAIL: '${ADMIN_EMAIL:-}',
      ADMIN_PASSWORD: '${ADMIN_PASSWORD:-}',
      SMTP_URL: '${SMTP_URL:-}',
      EMAIL_TRANSPORT: '${EMAIL_TRANSPORT:-}',
    });
  });
});

/**
 * `npm run sdk:python` (a CI gate): the official Python SDK (clients/python) installed with pip into
 * .venv-sdk/ (its dependencies from PyPI, created with SDK_PYTHON, default python3), then its README
 * example run as written against the built server: sign in, create an app and an API key, add a want with
 * the key, read a typed 404 (docs/api/generated-clients.md).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN, ARTIFACTS_DIR, PROJECT_ROOT, startBuiltServer } from '../shared/built-server';
import { CLIENTS_DIR, START_TIMEOUT_MS } from './generators';
import { readmeExampleDiffers } from './readme-example';

const VENV = join(PROJECT_ROOT, '.venv-sdk');
const PYTHON = process.env.SDK_PYTHON ?? 'python3';
const PACKAGE = join(CLIENTS_DIR, 'python');
const EXAMPLE = join(PACKAGE, 'examples', 'quickstart.py');

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): string {
  const result = spawnSync(command, args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.status})`);
  return result.stdout;
}

/** The package as a user installs it: `pip install clients/python` (reinstalled on every run). */
function install(): string {
  if (!existsSync(join(VENV, 'bin', 'python'))) run(PYTHON, ['-m', 'venv', VENV]);
  const pip = [join(VENV, 'bin', 'pip'), '--quiet', '--disable-pip-version-check'] as const;
  run(pip[0], [...pip.slice(1), 'install', PACKAGE]);
  run(pip[0], [...pip.slice(1), 'install', '--force-reinstall', '--no-deps', PACKAGE]);
  return join(VENV, 'bin', 'python');
}

async function main(): Promise<void> {
  const differs = readmeExampleDiffers(join(PACKAGE, 'README.md'), 'python', EXAMPLE);
  if (differs) throw new Error(differs);
  const python = install();
  const server = await startBuiltServer({
    logFile: join(ARTIFACTS_DIR, 'sdk', 'python-server.log'),
    startTimeoutMs: START_TIMEOUT_MS,
  });
  try {
    const output = run(python, [EXAMPLE], {
      ...process.env,
      BASE_URL: server.baseUrl,
      EMAIL: ADMIN.email,
      PASSWORD: ADMIN.password,
      APP_ID: 'sdk-python',
    });
    const result = JSON.parse(output) as { want_id?: string; status?: number; not_found?: unknown };
    const expected = JSON.stringify({ success: false, error: 'Want not found' });
    if (!/^[0-9a-f]{24}$/.test(result.want_id ?? '') || result.status !== 404) {
      throw new Error(`unexpected result of the Python example: ${output}`);
    }
    if (JSON.stringify(result.not_found) !== expected) throw new Error(`not the typed 404: ${output}`);
    console.log(`Python SDK example passed: ${output.trim()}`);
  } finally {
    await server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

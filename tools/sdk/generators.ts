/**
 * The generators of the official SDKs (clients/, docs/api/generated-clients.md) and where their output goes.
 * openapi-typescript (an npm devDependency) writes the TypeScript types; openapi-generator's python and java
 * generators run from the Maven Central jar, fetched into the local Maven repository on first use (never
 * committed). Every version is pinned here or in package.json, so a regeneration is reproducible.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../shared/built-server';

/** A cold start (the dev database launcher built by Maven) on a loaded 2-core machine takes minutes. */
export const START_TIMEOUT_MS = 300_000;

export const CLIENTS_DIR = join(PROJECT_ROOT, 'clients');
export const OPENAPI_GENERATOR_VERSION = '7.14.0';
export const PYTHON_PACKAGE = 'admin_service_client';
export const PYTHON_IGNORE_FILE = join(CLIENTS_DIR, 'python', '.openapi-generator-ignore');

/**
 * `_id` (the storage id) and `id` (the app id) of an app become one name in generators that drop the
 * underscore; this gives `_id` a name of its own in those clients.
 */
export const NAME_MAPPINGS = '_id=storage_id';

const GENERATOR_JAR = join(
  process.env.MAVEN_REPO ?? join(homedir(), '.m2', 'repository'),
  'org/openapitools/openapi-generator-cli',
  OPENAPI_GENERATOR_VERSION,
  `openapi-generator-cli-${OPENAPI_GENERATOR_VERSION}.jar`,
);

function run(command: string, args: string[], cwd = PROJECT_ROOT): void {
  execFileSync(command, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
}

/** The openapi-generator jar, downloaded by Maven into its local repository when it is not there yet. */
export function openapiGeneratorJar(): string {
  if (!existsSync(GENERATOR_JAR)) {
    const artifact = `org.openapitools:openapi-generator-cli:${OPENAPI_GENERATOR_VERSION}`;
    run('mvn', ['-q', '-B', 'dependency:get', `-Dartifact=${artifact}`, '-Dtransitive=false']);
  }
  return GENERATOR_JAR;
}

/** Runs one openapi-generator generator over the document into `outDir`. */
export function openapiGenerator(generator: string, document: string, outDir: string, extra: string[]): void {
  run('java', [
    // Warnings and errors only: its INFO lines name every file it writes.
    '-Dlog.level=warn',
    '-jar',
    openapiGeneratorJar(),
    'generate',
    '--input-spec',
    document,
    '--generator-name',
    generator,
    '--output',
    outDir,
    '--name-mappings',
    NAME_MAPPINGS,
    ...extra,
  ]);
}

/** `clients/typescript/src/schema.d.ts`: the paths, operations and schemas of the document as types. */
export function generateTypeScript(document: string, outFile: string): void {
  run(join(PROJECT_ROOT, 'node_modules', '.bin', 'openapi-typescript'), [document, '--output', outFile]);
}

/** The Python package's generated part (clients/python; its README and examples are written by hand). */
export function generatePython(document: string, outDir: string): void {
  openapiGenerator('python', document, outDir, [
    '--package-name',
    PYTHON_PACKAGE,
    '--additional-properties=projectName=admin-service-client,packageVersion=1.0.0',
    '--ignore-file-override',
    PYTHON_IGNORE_FILE,
  ]);
}

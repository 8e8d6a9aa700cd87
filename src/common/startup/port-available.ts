import { createServer } from 'node:net';
import { StartupError } from './startup-error';

/**
 * The one line for a listen failure the operator can fix, naming PORT or HOST; undefined for any other
 * error. Used before start-up (requireFreePort) and when `listen` itself fails.
 */
export function listenProblem(error: unknown, port: number, host: string): StartupError | undefined {
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
    case 'EADDRINUSE':
      return new StartupError(
        `PORT=${port} is already in use on ${host} (another process, perhaps another instance of this ` +
          'service, listens there): stop it or set PORT to a free port',
      );
    case 'EACCES':
      return new StartupError(
        `PORT=${port} needs privileges this user does not have (ports below 1024): set PORT to 1024 or above`,
      );
    case 'EADDRNOTAVAIL':
      return new StartupError(`HOST=${host} is not an address of this machine: use 0.0.0.0 or 127.0.0.1`);
    // A name that does not resolve (a typo such as `locahost`), or a resolver that does not answer.
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartupError(
        `HOST=${host} is not a name this machine can resolve (${(error as NodeJS.ErrnoException).code}): ` +
          'use 0.0.0.0, 127.0.0.1 or localhost',
      );
    default:
      return undefined;
  }
}

/**
 * Fails with one line naming PORT when the address is taken, before the application and its embedded
 * database start (otherwise Nest reports "successfully started" and only `listen` fails, with EADDRINUSE).
 * Port 0 (any free port) is never taken. Another process may still take the port in between; main.ts maps
 * that `listen` failure to the same line.
 */
export async function requireFreePort(port: number, host: string): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (error) => reject(listenProblem(error, port, host) ?? error));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}

import { MongoClient } from 'mongodb';
import { hostsOf } from '../config/mongodb-uri';

/** Thrown when the database of MONGODB_URI does not answer at start-up; the message is one line. */
export class DatabaseUnreachableError extends Error {}

/**
 * The driver's reason, shortened to its first line (a server selection error may list the whole topology).
 */
function reasonOf(error: unknown, uri: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = message.split('\n')[0].slice(0, 200);
  // The driver does not quote the URI, but a reason must never carry the password whatever it says.
  const password = /^mongodb(?:\+srv)?:\/\/[^:@/?]*:([^@/?]*)@/.exec(uri)?.[1];
  return password ? line.split(password).join('***') : line;
}

/** The connection was refused: nothing listens there, and waiting will not change that by itself. */
const isRefused = (error: unknown): boolean =>
  error instanceof Error &&
  ((error.cause as NodeJS.ErrnoException | undefined)?.code === 'ECONNREFUSED' ||
    /ECONNREFUSED/.test(error.message));

/**
 * Settles (with the driver's error) once every server the client knows of has refused a connection: the
 * driver would go on retrying until its selection limit, though nothing listens at any of them.
 */
function everyServerRefused(client: MongoClient): Promise<never> {
  return new Promise((_, reject) => {
    let known: string[] = [];
    const refused = new Set<string>();
    client.on('topologyDescriptionChanged', (event) => {
      known = [...event.newDescription.servers.keys()];
    });
    client.on('serverHeartbeatFailed', (event) => {
      if (!isRefused(event.failure)) return;
      refused.add(event.connectionId);
      if (known.length > 0 && known.every((host) => refused.has(host))) reject(event.failure);
    });
  });
}

/**
 * Connects once to the database of `uri` and pings it, or fails with one line naming MONGODB_URI and the
 * hosts (never the credentials): at once when every server refuses the connection, else after `timeoutMs`.
 * Run before Nest builds the application: Mongoose's own connect retries for over a minute and logs each
 * attempt with its stack (docs/decisions/operations-cheap-health.md).
 */
export async function requireReachableDatabase(uri: string, timeoutMs: number): Promise<void> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: timeoutMs, connectTimeoutMS: timeoutMs });
  const refused = everyServerRefused(client);
  refused.catch(() => undefined);
  try {
    await Promise.race([client.connect().then(() => client.db().command({ ping: 1 })), refused]);
  } catch (error) {
    const what = isRefused(error) ? 'refused the connection' : `did not answer within ${timeoutMs / 1000} s`;
    throw new DatabaseUnreachableError(
      `MONGODB_URI: cannot reach the database at ${hostsOf(uri)}: it ${what} (${reasonOf(error, uri)})`,
    );
  } finally {
    await client.close().catch(() => undefined);
  }
}

import { MongoClient } from 'mongodb';
import { hostsOf } from '../config/mongodb-uri';

/** Thrown when the database of MONGODB_URI does not answer at start-up; the message is one line. */
export class DatabaseUnreachableError extends Error {}

/** The driver's reason, shortened to its first line (a server selection error may list the whole topology). */
function reasonOf(error: unknown, uri: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = message.split('\n')[0].slice(0, 200);
  // The driver does not quote the URI, but a reason must never carry the password whatever it says.
  const password = /^mongodb(?:\+srv)?:\/\/[^:@/?]*:([^@/?]*)@/.exec(uri)?.[1];
  return password ? line.split(password).join('***') : line;
}

/**
 * Connects once to the database of `uri` and pings it, or fails after `timeoutMs` with one line naming
 * MONGODB_URI and the hosts (never the credentials). Run before Nest builds the application: Mongoose's own
 * connect retries for over a minute and logs each attempt with its stack (docs/decisions.md, issue 26).
 */
export async function requireReachableDatabase(uri: string, timeoutMs: number): Promise<void> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: timeoutMs, connectTimeoutMS: timeoutMs });
  try {
    await client.connect();
    await client.db().command({ ping: 1 });
  } catch (error) {
    throw new DatabaseUnreachableError(
      `MONGODB_URI: cannot reach the database at ${hostsOf(uri)} within ${timeoutMs / 1000} s ` +
        `(${reasonOf(error, uri)})`,
    );
  } finally {
    await client.close().catch(() => undefined);
  }
}

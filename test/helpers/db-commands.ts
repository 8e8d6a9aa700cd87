import type { CommandStartedEvent } from 'mongodb';
import type { Connection } from 'mongoose';

/**
 * The database commands the app's connection sends while `work` runs, by name and collection (e.g.
 * `insert contacts`). The connection must have been opened with command monitoring on: call
 * `monitorDatabaseCommands()` before `createTestApp`. Background work of the app (the health refresh, a
 * worker's poll) would count too: tests that use this run without workers.
 */
export async function commandsDuring(
  connection: Connection,
  work: () => Promise<unknown>,
): Promise<string[]> {
  const client = connection.getClient();
  if (!client.options.monitorCommands) {
    throw new Error('Command monitoring is off: call monitorDatabaseCommands() before createTestApp()');
  }
  const seen: string[] = [];
  const listener = (event: CommandStartedEvent) =>
    seen.push(`${event.commandName} ${String(event.command[event.commandName] ?? '')}`.trim());
  client.on('commandStarted', listener);
  try {
    await work();
  } finally {
    client.off('commandStarted', listener);
  }
  return seen;
}

/** Turns on the driver's command monitoring for the next `createTestApp` of this test file. */
export function monitorDatabaseCommands(): void {
  const uri = process.env.MONGODB_URI ?? '';
  if (uri.includes('monitorCommands=true')) return;
  process.env.MONGODB_URI = `${uri}${uri.includes('?') ? '&' : '?'}monitorCommands=true`;
}

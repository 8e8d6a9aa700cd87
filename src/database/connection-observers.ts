import type { MongooseModuleOptions } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';

/**
 * Code outside the service that watches its database connections: the query-shape recorder of the tests
 * (test/query-shapes/) and the command counter of the benchmarks (bench/command-count.js). They are loaded
 * by a Jest setup file or `node --require`, never by the service, and register here. The list lives on
 * `globalThis` so that a preloaded file and the compiled service share it without importing each other.
 */
export type ConnectionObserver = (connection: Connection) => void;

const OBSERVERS = Symbol.for('admin-service.connection-observers');

export function connectionObservers(): ConnectionObserver[] {
  const holder = globalThis as { [OBSERVERS]?: ConnectionObserver[] };
  return (holder[OBSERVERS] ??= []);
}

/**
 * The connection options that hand each new connection to the observers (with command events); none without.
 */
export function observedConnection(): Pick<MongooseModuleOptions, 'monitorCommands' | 'connectionFactory'> {
  const observers = connectionObservers();
  if (observers.length === 0) return {};
  return {
    monitorCommands: true,
    connectionFactory: (connection: Connection) => {
      for (const observe of observers) observe(connection);
      return connection;
    },
  };
}

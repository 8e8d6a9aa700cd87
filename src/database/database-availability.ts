import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import type { TopologyDescriptionChangedEvent } from 'mongodb';
import type { Connection } from 'mongoose';

/** Server types that take writes: what a request or a worker needs of the database. */
const WRITABLE = new Set(['Standalone', 'RSPrimary', 'Mongos', 'LoadBalancer']);

/** A change of reachability; `outageMs` is how long the database was away, on its return. */
export interface AvailabilityChange {
  reachable: boolean;
  outageMs?: number;
}

type Listener = (change: AvailabilityChange) => void;

/**
 * Whether the database can take writes now, as the driver's own monitoring sees it: every topology change
 * (a failed heartbeat, a connection error of any operation, an election) says whether a writable server is
 * known. The driver checks every `heartbeatFrequencyMS` (connectionOptions), so a database that goes away
 * or comes back shows here within about that long, with no query of ours. `/health` and the workers read
 * it; one log line when the database goes and one when it returns (docs/operations/running-on-mongodb.md).
 */
@Injectable()
export class DatabaseAvailability implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Database');
  private readonly listeners = new Set<Listener>();
  private lostAt: number | null = null;

  constructor(@InjectConnection() private readonly connection: Connection) {}

  /** A writable server is known (false from the first failed check until one answers again). */
  get reachable(): boolean {
    return this.lostAt === null;
  }

  /** Calls `listener` on each change (not with the current state); returns the function that removes it. */
  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onModuleInit(): void {
    // Reachable to begin with: Mongoose's connect, awaited before any provider exists, selected a writable
    // server. (Not Mongoose's `readyState`, which reads "disconnected" whenever two heartbeats are late.)
    // A loss from here on changes the topology at the next check, which this hears.
    this.connection.getClient().on('topologyDescriptionChanged', this.topologyChanged);
  }

  onModuleDestroy(): void {
    this.connection.getClient().off('topologyDescriptionChanged', this.topologyChanged);
    this.listeners.clear();
  }

  private readonly topologyChanged = (event: TopologyDescriptionChangedEvent): void => {
    const writable = [...event.newDescription.servers.values()].some((server) => WRITABLE.has(server.type));
    if (writable === this.reachable) return;
    const now = Date.now();
    if (!writable) {
      this.lostAt = now;
      this.logger.warn('The database is unreachable (no writable server)');
      this.emit({ reachable: false });
    } else {
      const outageMs = now - (this.lostAt ?? now);
      this.lostAt = null;
      this.logger.log(`The database is reachable again after ${(outageMs / 1000).toFixed(1)} s`);
      this.emit({ reachable: true, outageMs });
    }
  };

  private emit(change: AvailabilityChange): void {
    for (const listener of this.listeners) listener(change);
  }
}

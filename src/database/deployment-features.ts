import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import { type Db, MongoServerError } from 'mongodb';
import type { Connection } from 'mongoose';
import { retryTransient } from '../common/database/transient-retry';

/** The fields of a `hello` reply that tell the kind of deployment (MongoDB's handshake, all optional). */
export interface HelloReply {
  /** Present on a replica-set member: the set's name. */
  setName?: string;
  /** `isdbgrid` on a mongos (a sharded cluster's router). */
  msg?: string;
  /** Present when the server supports sessions; transactions need them. */
  logicalSessionTimeoutMinutes?: number | null;
}

/** MongoDB's CommandNotFound: the dev stand-in knows only the legacy name of the handshake. */
const COMMAND_NOT_FOUND = 59;

/**
 * Whether the deployment runs multi-document transactions: a replica set or a sharded cluster, with
 * sessions. A standalone server has sessions but no transactions; the dev stand-in has neither.
 */
export function supportsTransactions(reply: HelloReply): boolean {
  if (reply.logicalSessionTimeoutMinutes === undefined || reply.logicalSessionTimeoutMinutes === null) {
    return false;
  }
  return typeof reply.setName === 'string' || reply.msg === 'isdbgrid';
}

/** A short name for the log: which deployment the service is talking to. */
export function describeDeployment(reply: HelloReply): string {
  if (reply.msg === 'isdbgrid') return 'a sharded cluster (mongos)';
  if (typeof reply.setName === 'string') return `replica set ${reply.setName}`;
  return 'a single server without replication';
}

/** The server's handshake reply: `hello`, or `isMaster` where `hello` is unknown (the dev stand-in). */
export async function helloOf(db: Db): Promise<HelloReply> {
  try {
    return await db.admin().command({ hello: 1 });
  } catch (error) {
    if (!(error instanceof MongoServerError) || error.code !== COMMAND_NOT_FOUND) throw error;
    return db.admin().command({ isMaster: 1 });
  }
}

/**
 * What the connected deployment offers, read once at start-up (one handshake command): code that can do
 * better on a replica set (the last-admin rule's transaction) asks here instead of trying and failing.
 */
@Injectable()
export class DeploymentFeatures implements OnModuleInit {
  private readonly logger = new Logger('Database');
  private transactionsSupported = false;

  constructor(@InjectConnection() private readonly connection: Connection) {}

  /** Multi-document transactions: a replica set or a sharded cluster, never a standalone server. */
  get transactions(): boolean {
    return this.transactionsSupported;
  }

  async onModuleInit(): Promise<void> {
    const reply = await retryTransient(() => helloOf(this.connection.db!));
    this.transactionsSupported = supportsTransactions(reply);
    this.logger.log(
      `Connected to ${describeDeployment(reply)}: transactions ${this.transactionsSupported ? 'on' : 'off'}`,
    );
  }
}

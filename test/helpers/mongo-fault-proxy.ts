import { createServer, type Server, type Socket, connect } from 'node:net';
import { BSON, type Document } from 'mongodb';

/** MongoDB wire protocol op codes the driver and the dev database exchange. */
const OP_REPLY = 1;
const OP_QUERY = 2004;
const OP_MSG = 2013;
const HEADER_BYTES = 16;

/** A command as the proxy saw it on its way to the database (session fields still in place). */
export interface SeenCommand {
  name: string;
  /** The collection a CRUD command names (`insert: 'email_jobs'`), else null. */
  collection: string | null;
  body: Document;
  /** The documents of an `insert` (from the body or an OP_MSG document sequence). */
  documents: Document[];
}

/**
 * What the proxy does with one command, the ways a real election or network fault shows itself to a client:
 * - `cut-before`: the connection closes before the command reaches the server (nothing written);
 * - `cut-after`: the command is written, the connection closes before the answer (written, unacknowledged);
 * - `answer`: the proxy answers instead of the server (e.g. NotWritablePrimary from a stepped-down node);
 * - `rewrite`: the server's answer is changed on its way back (e.g. a write-concern error added).
 */
export type FaultAction =
  | { kind: 'cut-before' }
  | { kind: 'cut-after' }
  | { kind: 'answer'; reply: Document }
  | { kind: 'rewrite'; reply: (answer: Document) => Document };

export interface FaultProxyOptions {
  /** Decides each command's fate; undefined forwards it untouched. */
  onCommand?: (command: SeenCommand) => FaultAction | undefined;
  /**
   * Presents the dev database as a one-member replica set with sessions (handshake fields added; session
   * and transaction fields taken off commands; `commitTransaction`/`abortTransaction`/`endSessions`
   * answered by the proxy), so the driver runs its session and transaction code against real data. It is
   * not a transaction engine: an aborted transaction's writes stay.
   */
  replicaSet?: boolean;
}

/** A `NotWritablePrimary` answer, as a node that stepped down in an election sends it. */
export const NOT_WRITABLE_PRIMARY: Document = {
  ok: 0,
  errmsg: 'not primary',
  code: 10107,
  codeName: 'NotWritablePrimary',
};

/** Adds a write-concern failure to an answer, as a primary does when it loses its majority mid-write. */
export function withWriteConcernError(answer: Document): Document {
  return {
    ...answer,
    writeConcernError: {
      code: 64,
      codeName: 'WriteConcernFailed',
      errmsg: 'waiting for replication timed out',
    },
  };
}

const SESSION_FIELDS = ['lsid', 'txnNumber', 'startTransaction', 'autocommit', 'readConcern', '$clusterTime'];
const ANSWERED_BY_PROXY = new Set(['committransaction', 'aborttransaction', 'endsessions']);
const HANDSHAKES = new Set(['hello', 'ismaster']);

/**
 * A TCP proxy between the service and the dev database that speaks enough of the wire protocol to see each
 * command and act on it (FaultAction). Test-only, loopback-only; `commands` keeps every command seen.
 */
export class MongoFaultProxy {
  readonly commands: SeenCommand[] = [];
  private readonly sockets = new Set<Socket>();
  private server?: Server;
  private port = 0;

  private constructor(
    private readonly target: { host: string; port: number },
    private readonly options: FaultProxyOptions,
  ) {}

  /** Starts a proxy in front of the database of `uri` (`mongodb://host:port/db`). */
  static async start(uri: string, options: FaultProxyOptions = {}): Promise<MongoFaultProxy> {
    const url = new URL(uri);
    const proxy = new MongoFaultProxy({ host: url.hostname, port: Number(url.port) }, options);
    proxy.server = createServer((client) => proxy.pipe(client));
    await new Promise<void>((resolve) => proxy.server!.listen(0, '127.0.0.1', resolve));
    proxy.port = (proxy.server.address() as { port: number }).port;
    return proxy;
  }

  /** The same database reached through the proxy. */
  uriFor(uri: string): string {
    const url = new URL(uri);
    url.host = `127.0.0.1:${this.port}`;
    if (this.options.replicaSet) url.searchParams.set('directConnection', 'true');
    return url.toString();
  }

  /** The commands named `name` (lower case) that reached the proxy. */
  named(name: string): SeenCommand[] {
    return this.commands.filter((command) => command.name.toLowerCase() === name.toLowerCase());
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  private pipe(client: Socket): void {
    const upstream = connect(this.target.port, this.target.host);
    this.sockets.add(client).add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    // Request id → what to do with its answer.
    const pending = new Map<number, (answer: Buffer) => Buffer | null>();
    frames(client, (message) => {
      const request = parseRequest(message);
      if (!request) return void upstream.write(message);
      this.commands.push(request.command);
      const name = request.command.name.toLowerCase();
      if (this.options.replicaSet && ANSWERED_BY_PROXY.has(name)) {
        return void client.write(reply(request.requestId, { ok: 1 }));
      }
      const action = this.options.onCommand?.(request.command);
      if (action?.kind === 'cut-before') return end();
      if (action?.kind === 'answer') return void client.write(reply(request.requestId, action.reply));
      const handshake = this.options.replicaSet && HANDSHAKES.has(name);
      pending.set(request.requestId, (answer) => {
        if (action?.kind === 'cut-after') return null;
        if (action?.kind === 'rewrite') return rewriteAnswer(answer, action.reply);
        return handshake ? rewriteAnswer(answer, (doc) => this.asReplicaSetMember(doc)) : answer;
      });
      upstream.write(this.options.replicaSet ? withoutSessionFields(message, request) : message);
    });
    frames(upstream, (message) => {
      const responseTo = message.readInt32LE(8);
      const transform = pending.get(responseTo);
      pending.delete(responseTo);
      const out = transform ? transform(message) : message;
      if (out) client.write(out);
      else end();
    });
  }

  private asReplicaSetMember(answer: Document): Document {
    const me = `127.0.0.1:${this.port}`;
    return {
      ...answer,
      setName: 'rs0',
      setVersion: 1,
      hosts: [me],
      me,
      primary: me,
      secondary: false,
      logicalSessionTimeoutMinutes: 30,
    };
  }
}

/** Calls `onMessage` with each whole wire message read from `socket`. */
function frames(socket: Socket, onMessage: (message: Buffer) => void): void {
  let buffered = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 4 && buffered.length >= buffered.readInt32LE(0)) {
      const length = buffered.readInt32LE(0);
      onMessage(buffered.subarray(0, length));
      buffered = buffered.subarray(length);
    }
  });
}

interface ParsedRequest {
  requestId: number;
  opCode: number;
  command: SeenCommand;
  /** OP_MSG: the document sequences, kept to rebuild the message. */
  sequences: Buffer[];
}

/** A client message's command, or null for anything the proxy passes through unread. */
function parseRequest(message: Buffer): ParsedRequest | null {
  const requestId = message.readInt32LE(4);
  const opCode = message.readInt32LE(12);
  if (opCode === OP_QUERY) {
    const nameEnd = message.indexOf(0, HEADER_BYTES + 4);
    const bodyStart = nameEnd + 1 + 8;
    const body = BSON.deserialize(message.subarray(bodyStart, bodyStart + message.readInt32LE(bodyStart)));
    return { requestId, opCode, command: commandOf(body, []), sequences: [] };
  }
  if (opCode !== OP_MSG) return null;
  let offset = HEADER_BYTES + 4;
  let body: Document = {};
  const documents: Document[] = [];
  const sequences: Buffer[] = [];
  while (offset < message.length) {
    const kind = message.readUInt8(offset);
    const size = message.readInt32LE(offset + 1);
    if (kind === 0) {
      body = BSON.deserialize(message.subarray(offset + 1, offset + 1 + size));
      offset += 1 + size;
      continue;
    }
    if (kind !== 1) break;
    const section = message.subarray(offset, offset + 1 + size);
    sequences.push(section);
    let at = section.indexOf(0, 5) + 1;
    while (at < section.length) {
      const docSize = section.readInt32LE(at);
      documents.push(BSON.deserialize(section.subarray(at, at + docSize)));
      at += docSize;
    }
    offset += 1 + size;
  }
  return { requestId, opCode, command: commandOf(body, documents), sequences };
}

function commandOf(body: Document, sequenced: Document[]): SeenCommand {
  const name = Object.keys(body)[0] ?? '';
  const target = body[name] as unknown;
  const documents = Array.isArray(body.documents) ? (body.documents as Document[]) : sequenced;
  return { name, collection: typeof target === 'string' ? target : null, body, documents };
}

/** The OP_MSG request without the fields a server without sessions refuses. */
function withoutSessionFields(message: Buffer, request: ParsedRequest): Buffer {
  if (request.opCode !== OP_MSG) return message;
  const body = { ...request.command.body };
  for (const field of SESSION_FIELDS) delete body[field];
  return opMsg(request.requestId, 0, body, request.sequences);
}

/** The server's answer (OP_MSG or OP_REPLY) with its document changed by `change`. */
function rewriteAnswer(answer: Buffer, change: (doc: Document) => Document): Buffer {
  const requestId = answer.readInt32LE(4);
  const responseTo = answer.readInt32LE(8);
  const opCode = answer.readInt32LE(12);
  if (opCode === OP_REPLY) {
    const start = HEADER_BYTES + 20;
    const doc = BSON.deserialize(answer.subarray(start, start + answer.readInt32LE(start)));
    const out = Buffer.from(BSON.serialize(change(doc)));
    const head = Buffer.from(answer.subarray(0, start));
    head.writeInt32LE(start + out.length, 0);
    return Buffer.concat([head, out]);
  }
  const doc = BSON.deserialize(answer.subarray(HEADER_BYTES + 5, answer.length));
  return opMsg(requestId, responseTo, change(doc), []);
}

/** An OP_MSG answer to request `responseTo`. */
function reply(responseTo: number, doc: Document): Buffer {
  return opMsg(Math.floor(Math.random() * 2 ** 30), responseTo, doc, []);
}

function opMsg(requestId: number, responseTo: number, body: Document, sequences: Buffer[]): Buffer {
  const bodyBytes = Buffer.from(BSON.serialize(body));
  const length = HEADER_BYTES + 4 + 1 + bodyBytes.length + sequences.reduce((sum, s) => sum + s.length, 0);
  const head = Buffer.alloc(HEADER_BYTES + 4 + 1);
  head.writeInt32LE(length, 0);
  head.writeInt32LE(requestId, 4);
  head.writeInt32LE(responseTo, 8);
  head.writeInt32LE(OP_MSG, 12);
  head.writeUInt32LE(0, 16);
  head.writeUInt8(0, 20);
  return Buffer.concat([head, bodyBytes, ...sequences]);
}

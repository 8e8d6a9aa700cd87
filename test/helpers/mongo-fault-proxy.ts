import { randomInt } from 'node:crypto';
import { connect, createServer, type Socket } from 'node:net';
import { BSON } from 'mongodb';

/** MongoDB's wire message of commands and their replies (OP_MSG). */
const OP_MSG = 2013;
const HEADER_BYTES = 16;
const CHECKSUM_PRESENT = 1;

export type Command = Record<string, unknown>;

export interface MongoFaultProxy {
  /** MONGODB_URI through the proxy, to the same database. */
  uri: string;
  /** Every command seen, in order (the body section of each OP_MSG). */
  commands: Command[];
  close(): Promise<void>;
}

/** The body (section of kind 0) of an OP_MSG; document sequences (kind 1) are skipped. */
function bodyOf(message: Buffer): Command | undefined {
  const end = message.length - (message.readUInt32LE(HEADER_BYTES) & CHECKSUM_PRESENT ? 4 : 0);
  let offset = HEADER_BYTES + 4;
  while (offset < end) {
    const kind = message[offset];
    const size = message.readInt32LE(offset + 1);
    if (kind === 0) return BSON.deserialize(message.subarray(offset + 1, offset + 1 + size));
    offset += 1 + size;
  }
  return undefined;
}

/** An OP_MSG reply to the request `requestId`, carrying `reply` as the server would. */
function replyTo(requestId: number, reply: Command): Buffer {
  const body = Buffer.from(BSON.serialize(reply));
  const message = Buffer.alloc(HEADER_BYTES + 4 + 1 + body.length);
  message.writeInt32LE(message.length, 0);
  message.writeInt32LE(randomInt(1, 2 ** 31 - 1), 4);
  message.writeInt32LE(requestId, 8);
  message.writeInt32LE(OP_MSG, 12);
  message.writeUInt32LE(0, 16);
  message[20] = 0;
  body.copy(message, 21);
  return message;
}

/**
 * A TCP proxy in front of the dev database that reads each command and may answer it itself, as a real
 * MongoDB would answer a fault the dev database never produces (a query stopped by `maxTimeMS`, which it
 * ignores). `fault` returns the server's reply for a command to intercept, or nothing to pass it on.
 */
export async function startMongoFaultProxy(
  target: string,
  fault: (command: Command) => Command | undefined,
): Promise<MongoFaultProxy> {
  const url = new URL(target);
  const commands: Command[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(url.port), url.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    upstream.pipe(client);
    let pending = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4 && pending.length >= pending.readInt32LE(0)) {
        const message = pending.subarray(0, pending.readInt32LE(0));
        pending = pending.subarray(message.length);
        const command = message.readInt32LE(12) === OP_MSG ? bodyOf(message) : undefined;
        if (command) commands.push(command);
        const reply = command && fault(command);
        if (reply) client.write(replyTo(message.readInt32LE(4), reply));
        else upstream.write(message);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const proxied = new URL(target);
  proxied.host = `127.0.0.1:${port}`;
  return {
    uri: proxied.toString(),
    commands,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

import { createServer, type Server, type Socket, connect } from 'node:net';

/** A TCP proxy on 127.0.0.1 whose link can be cut (connections reset, new ones refused) and restored. */
export interface TcpProxy {
  /** The proxy's own port (stays the same across a cut). */
  readonly port: number;
  /** Resets every open connection and stops listening: clients see their connections drop, then refusals. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** Starts a proxy to `target` (`host:port`), e.g. to take a database away from a service and give it back. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    track(client);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  const listen = (port: number) =>
    new Promise<number>((done, fail) => {
      server.once('error', fail);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', fail);
        done((server.address() as { port: number }).port);
      });
    });
  const stop = () =>
    new Promise<void>((done) => {
      for (const socket of sockets) socket.resetAndDestroy();
      if (server.listening) server.close(() => done());
      else done();
    });
  const port = await listen(0);
  return { port, cut: stop, restore: () => listen(port).then(() => undefined), close: stop };
}

import { createSocket, type Socket } from 'node:dgram';
import * as dnsPacket from 'dns-packet';

export interface PublishedRecord {
  type: 'TXT' | 'CNAME';
  name: string;
  value: string;
}

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, as DNS_SERVERS takes it. */
  address: string;
  /** What the server answers; change it to publish or withdraw a record. */
  records: PublishedRecord[];
  close(): Promise<void>;
}

/** TXT strings are at most 255 bytes each (RFC 1035): a DKIM key is published as several. */
const chunks = (value: string) => value.match(/.{1,255}/g) ?? [''];

/**
 * A tiny authoritative DNS server on loopback UDP (npm `dns-packet` + node:dgram) answering TXT and CNAME
 * questions from `records`; anything else is NXDOMAIN. Enough for the sender-domain checks and for
 * mailauth's DKIM lookups.
 */
export async function startDnsServer(records: PublishedRecord[] = []): Promise<TestDnsServer> {
  const socket: Socket = createSocket('udp4');
  const server: TestDnsServer = {
    address: '',
    records,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
  socket.on('message', (message, peer) => {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    const name = question?.name.toLowerCase() ?? '';
    const matching = server.records.filter(
      (record) => record.name.toLowerCase() === name && record.type === question?.type,
    );
    const answers = matching.map((record) =>
      record.type === 'TXT'
        ? { type: 'TXT' as const, name: question!.name, ttl: 1, data: chunks(record.value) }
        : { type: 'CNAME' as const, name: question!.name, ttl: 1, data: record.value },
    );
    const known = server.records.some((record) => record.name.toLowerCase() === name);
    const reply = dnsPacket.encode({
      id: query.id,
      type: 'response',
      flags: dnsPacket.AUTHORITATIVE_ANSWER | (known ? 0 : 3), // rcode 3: NXDOMAIN
      questions: query.questions,
      answers,
    });
    socket.send(reply, peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  server.address = `127.0.0.1:${socket.address().port}`;
  return server;
}

/**
 * List pages benchmark: wall time of page 1 and of the last reachable page of five lists that grow with use
 * (subscribers, contacts, e-mail events, e-mail jobs, tickets), each over 100,000 matching documents in the
 * embedded dev database, on the built server, with its CPU time and database commands per request; with
 * BENCH_BASELINE_DIST, that build's pages beside.
 *
 *   npm run bench -- list-pages
 *   BENCH_BASELINE_DIST=/path/to/other/checkout/dist npm run bench -- list-pages   (before/after in one run)
 *   BENCH_DOCS=20000 BENCH_REQUESTS=5 …
 *       (matching documents per list; timed requests per page, median shown)
 *
 * "Last reachable page": the deepest `page` a build takes at limit 20 (before: 5,000, a skip of 99,980;
 * after: 501, a skip of 10,000), and, after, the last page reached by cursor (`after=` the record before it).
 * The dev database has no query planner (every non-unique query scans), so read its times as relative
 * figures; bench/README.md has the documents each page reads on MongoDB.
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { type Document, MongoClient, ObjectId } from 'mongodb';
import { cursorAfter } from '../src/common/pagination/page-cursor';
import { startDevDatabase, withDatabaseName } from '../src/database/dev-database';
import { type BenchServer, costMeter, PROJECT_ROOT, startServer, type UnitCost } from './http-bench';

const DOCS = Number(process.env.BENCH_DOCS ?? 100_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3);
const LIMIT = 20;
const BATCH = 5_000;
const APP = 'bench-lists';
const CAMPAIGN = 'bench-campaign';

interface List {
  name: string;
  collection: string;
  /** The route and query of the list. */
  path: string;
  /** What the list's query selects and how it sorts (to find the record before the last page). */
  filter: Document;
  sort: Record<string, 1 | -1>;
  document(i: number, createdAt: Date): Document;
}

const LISTS: List[] = [
  {
    name: 'subscribers (status=active)',
    collection: 'contacts',
    path: `/admin/${APP}/newsletter/subscribers?status=active`,
    filter: { deletedAt: null, subscriptions: { $elemMatch: { appId: APP, status: 'active' } } },
    sort: { createdAt: -1, _id: -1 },
    document: (i, createdAt) => ({
      email: `person-${i}@example.com`,
      firstName: `Person ${i}`,
      lastName: null,
      locale: null,
      tags: [],
      consent: { outreach: null, commercial: null, blog: true },
      consentHistory: [],
      subscriptions: [
        { appId: APP, status: 'active', source: 'import', referralUrl: null, subscribedAt: createdAt },
      ],
      deletedAt: null,
      revision: 0,
      createdAt,
      updatedAt: createdAt,
    }),
  },
  {
    name: 'contacts (category=blog)',
    collection: 'contacts',
    path: '/admin/contacts?category=blog',
    filter: { deletedAt: null, 'consent.blog': true },
    sort: { createdAt: -1, _id: -1 },
    document: () => ({}),
  },
  {
    name: 'e-mail events (campaignId + type=opened)',
    collection: 'email_events',
    path: `/admin/email-events?campaignId=${CAMPAIGN}&type=opened`,
    filter: { campaignId: CAMPAIGN, type: 'opened' },
    sort: { createdAt: -1, _id: -1 },
    document: (i, createdAt) => ({
      type: 'opened',
      provider: 'tracking',
      appId: APP,
      campaignId: CAMPAIGN,
      contactId: new ObjectId(),
      messageId: `campaign:${CAMPAIGN}:${i}`,
      email: `person-${i}@example.com`,
      automated: false,
      userAgent: null,
      createdAt,
    }),
  },
  {
    name: 'e-mail jobs (status=completed)',
    collection: 'email_jobs',
    path: '/admin/email-jobs?status=completed',
    filter: { status: 'completed' },
    sort: { createdAt: -1, _id: -1 },
    document: (i, createdAt) => ({
      type: 'email.send',
      status: 'completed',
      priority: 0,
      payload: { to: `person-${i}@example.com`, subject: 'Hello' },
      attempts: 1,
      maxAttempts: 5,
      idempotencyKey: `bench-${i}`,
      appId: APP,
      campaignId: CAMPAIGN,
      scheduledAt: createdAt,
      createdAt,
      updatedAt: createdAt,
    }),
  },
  {
    name: 'tickets across apps (status=pending)',
    collection: 'tickets',
    path: '/tickets?status=pending',
    filter: { status: 'pending' },
    sort: { createdAt: -1, _id: -1 },
    document: (i, createdAt) => ({
      appId: APP,
      topic: 'general',
      email: `person-${i}@example.com`,
      subject: `Order ${i}`,
      message: `Ticket ${i}`,
      status: 'pending',
      statusRank: 0,
      priority: 'normal',
      priorityRank: 1,
      attachments: [],
      messages: [],
      messageCount: 0,
      createdAt,
      updatedAt: createdAt,
    }),
  },
];

async function seed(uri: string): Promise<void> {
  const client = await MongoClient.connect(uri);
  try {
    const db = client.db();
    const now = Date.now();
    await db.collection('apps').insertOne({
      id: APP,
      name: APP,
      publicKey: `pk_${randomBytes(24).toString('hex')}`,
      active: true,
      allowedOrigins: [],
      features: {},
      chatChannels: {},
      createdAt: new Date(),
      updatedAt: new Date(),
    });
    // The contacts list reads the subscribers' records: one collection seeded for both.
    for (const list of LISTS.filter((each) => each.name !== 'contacts (category=blog)')) {
      for (let offset = 0; offset < DOCS; offset += BATCH) {
        const batch = Array.from({ length: Math.min(BATCH, DOCS - offset) }, (_, j) =>
          list.document(offset + j, new Date(now - (offset + j) * 1_000)),
        );
        await db.collection(list.collection).insertMany(batch, { ordered: false });
      }
    }
  } finally {
    await client.close();
  }
}

/** The `after` cursor of the record just before the list's last page (found once, untimed). */
async function lastPageCursor(uri: string, list: List): Promise<string> {
  const client = await MongoClient.connect(uri);
  try {
    const [before] = await client
      .db()
      .collection(list.collection)
      .find(list.filter)
      .sort(list.sort)
      .skip(DOCS - LIMIT - 1)
      .limit(1)
      .toArray();
    return cursorAfter(before, list.sort);
  } finally {
    await client.close();
  }
}

/**
 * Median wall time (ms) of REQUESTS requests, after one untimed, with the server's CPU time and database
 * commands per timed request: `412 ms (5,120 µs CPU, 1 cmd)`.
 */
async function timed(server: BenchServer, path: string): Promise<string> {
  const times: number[] = [];
  let perRequest: ((units: number) => Promise<UnitCost>) | undefined;
  for (let i = 0; i <= REQUESTS; i += 1) {
    if (i === 1) perRequest = await costMeter(server);
    const started = performance.now();
    const res = await fetch(`${server.baseUrl}${path}`, { headers: server.admin });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${path} → ${res.status}`);
    if (i > 0) times.push(performance.now() - started);
  }
  const { cpuUs, commands } = await perRequest!(REQUESTS);
  times.sort((a, b) => a - b);
  const cpu = cpuUs === undefined ? '' : `${Math.round(cpuUs).toLocaleString('en')} µs CPU, `;
  return `${times[Math.floor(times.length / 2)].toFixed(0)} ms (${cpu}${commands?.toFixed(2) ?? '–'} cmd)`;
}

async function main(): Promise<void> {
  const database = await startDevDatabase();
  const uri = withDatabaseName(database.uri, 'bench_lists');
  const servers: [string, BenchServer][] = [];
  try {
    process.stdout.write(`Seeding ${DOCS} documents per list… `);
    const seeded = performance.now();
    await seed(uri);
    console.log(`${((performance.now() - seeded) / 1000).toFixed(0)} s`);
    if (process.env.BENCH_BASELINE_DIST) {
      servers.push(['before', await startServer(resolve(process.env.BENCH_BASELINE_DIST), uri)]);
    }
    servers.push(['after', await startServer(resolve(PROJECT_ROOT, 'dist'), uri)]);
    const rows: string[] = ['| list | build | page 1 | last page by number | last page by cursor |'];
    rows.push('| --- | --- | --- | --- | --- |');
    for (const list of LISTS) {
      for (const [build, server] of servers) {
        const deepest = build === 'before' ? Math.ceil(DOCS / LIMIT) : Math.floor(10_000 / LIMIT) + 1;
        const first = await timed(server, `${list.path}&limit=${LIMIT}`);
        const byNumber = await timed(server, `${list.path}&limit=${LIMIT}&page=${deepest}`);
        const byCursor =
          build === 'before'
            ? '–'
            : await timed(server, `${list.path}&limit=${LIMIT}&after=${await lastPageCursor(uri, list)}`);
        const row = `| ${list.name} | ${build} | ${first} | ${byNumber}, page ${deepest} | ${byCursor} |`;
        rows.push(row);
        console.log(row);
      }
    }
    console.log(`\n${DOCS} matching documents per list, limit ${LIMIT}, median of ${REQUESTS}:\n`);
    console.log(rows.join('\n'));
  } finally {
    for (const [, server] of servers) await server.stop();
    await database.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

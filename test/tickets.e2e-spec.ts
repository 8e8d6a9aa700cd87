import { EventEmitter2 } from '@nestjs/event-emitter';
import type { App } from '../src/apps/schemas/app.schema';
import { Role } from '../src/common/auth/roles';
import { MAX_MESSAGES_PER_TICKET, Ticket, TicketSchema } from '../src/tickets/schemas/ticket.schema';
import { TicketCreatedEvent, TicketCustomerMessageEvent, TicketEvents } from '../src/tickets/ticket.events';
import { createTestApp, TestApp } from './helpers/app';
import { seedApp } from './helpers/factories';
import { createSession, Session } from './helpers/session';
import { seedTickets, ticketModel } from './helpers/tickets';

describe('Tickets', () => {
  let t: TestApp;
  let user: Session;
  let viewer: Session;
  let appA: App;
  let appB: App;

  beforeAll(async () => {
    t = await createTestApp();
    user = await createSession(t, Role.User);
    viewer = await createSession(t, Role.Viewer);
    appA = await seedApp(t);
    appB = await seedApp(t);
  });
  afterAll(() => t.close());

  const newTicket = (overrides: Record<string, unknown> = {}) => ({
    email: 'Customer@Example.com',
    subject: 'Cannot log in',
    message: 'The login button does nothing.',
    ...overrides,
  });
  const create = async (
    appId: string,
    overrides: Record<string, unknown> = {},
  ): Promise<Ticket & { _id: string }> => {
    const res = await user.http.post(`/${appId}/tickets`, newTicket(overrides));
    expect(res.status).toBe(201);
    return res.body.data;
  };
  const day = (date: string) => new Date(`${date}T12:00:00.000Z`);

  describe('POST /{appId}/tickets (JSON)', () => {
    it('opens a pending, normal, general ticket with a lower-cased e-mail', async () => {
      const res = await user.http.post(`/${appA.id}/tickets/`, newTicket({ shopId: 'shop-1' }));
      expect(res.status).toBe(201);
      expect(res.body.message).toBe('Ticket created');
      expect(res.body.data).toMatchObject({
        appId: appA.id,
        shopId: 'shop-1',
        email: 'customer@example.com',
        subject: 'Cannot log in',
        status: 'pending',
        priority: 'normal',
        topic: 'general',
        attachments: [],
        messageCount: 0,
      });
      expect(res.body.data._id).toMatch(/^[a-f\d]{24}$/);
      expect(res.body.data.resolvedAt).toBeUndefined();
      expect(res.text).not.toMatch(/statusRank|priorityRank|"messages"/);
    });

    it('keeps the given topic and priority', async () => {
      const ticket = await create(appA.id, { topic: 'billing', priority: 'urgent' });
      expect(ticket).toMatchObject({ topic: 'billing', priority: 'urgent', attachments: [] });
    });

    it('emits ticket.created with the app, ticket, subject and e-mail', async () => {
      const events: TicketCreatedEvent[] = [];
      const listener = (event: TicketCreatedEvent) => events.push(event);
      t.app.get(EventEmitter2).on(TicketEvents.Created, listener);
      try {
        const ticket = await create(appA.id, { message: 'Please   help\nsoon' });
        expect(events).toHaveLength(1);
        expect(events[0]).toBeInstanceOf(TicketCreatedEvent);
        expect(events[0]).toMatchObject({
          appId: appA.id,
          ticketId: ticket._id,
          subject: 'Cannot log in',
          email: 'customer@example.com',
          topic: 'general',
          priority: 'normal',
          excerpt: 'Please help soon',
        });
      } finally {
        t.app.get(EventEmitter2).off(TicketEvents.Created, listener);
      }
    });

    it('answers 404 for an unknown app and stores nothing', async () => {
      const res = await user.http.post('/no-such-app/tickets', newTicket());
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, error: 'App not found' });
      expect(await ticketModel(t).countDocuments({ appId: 'no-such-app' })).toBe(0);
    });

    it.each([
      [{ email: undefined }, /email/],
      [{ email: 'not-an-email' }, /email must be an email/],
      [{ subject: '' }, /subject/],
      [{ subject: 'x'.repeat(201) }, /subject/],
      [{ message: undefined }, /message/],
      [{ topic: 'sales' }, /topic/],
      [{ priority: 'critical' }, /priority/],
      [{ status: 'closed' }, /status should not exist/],
      [{ attachments: 'nope' }, /attachments must be an array/],
      [
        { attachments: [{ url: 'https://x.example.com/a', filename: 'a', mimetype: 'text/plain', size: 1 }] },
        /attachments must be uploaded as files/,
      ],
      [{ email: { $gt: '' } }, /email/],
    ])('answers 400 naming the field for %p', async (overrides, message) => {
      const res = await user.http.post(`/${appA.id}/tickets`, newTicket(overrides));
      expect(res.status).toBe(400);
      expect(res.body.success).toBe(false);
      expect(res.body.error).toMatch(message);
    });

    it('answers 400 for a body that is not an object, and 403 to a viewer', async () => {
      expect((await user.http.post(`/${appA.id}/tickets`, [newTicket()])).status).toBe(400);
      expect((await user.http.post(`/${appA.id}/tickets`)).status).toBe(400);
      expect((await viewer.http.post(`/${appA.id}/tickets`, newTicket())).status).toBe(403);
    });
  });

  describe('lists', () => {
    let a: Ticket[];
    let b: Ticket[];

    beforeAll(async () => {
      await ticketModel(t).deleteMany({});
      a = await seedTickets(t, [
        {
          appId: appA.id,
          createdAt: day('2025-01-01'),
          subject: 'Alpha refund',
          priority: 'low',
          status: 'closed',
        },
        {
          appId: appA.id,
          createdAt: day('2025-01-02'),
          subject: 'beta',
          message: 'a.b(c) literal',
          topic: 'billing',
        },
        {
          appId: appA.id,
          createdAt: day('2025-01-03'),
          subject: 'Gamma',
          priority: 'urgent',
          shopId: 'shop-9',
        },
        {
          appId: appA.id,
          createdAt: day('2025-01-04'),
          subject: 'Delta',
          email: 'vip@example.com',
          status: 'in_progress',
        },
        {
          appId: appA.id,
          createdAt: day('2025-01-05'),
          subject: 'Epsilon',
          priority: 'high',
          status: 'resolved',
        },
      ]);
      b = await seedTickets(t, [
        { appId: appB.id, createdAt: day('2025-01-03'), subject: 'Other app', email: 'vip@example.com' },
      ]);
    });

    const ids = (res: { body: { data: { _id: string }[] } }) => res.body.data.map((ticket) => ticket._id);
    const idOf = (ticket: Ticket) => String(ticket._id);
    const listA = (query: Record<string, string | number> = {}) =>
      viewer.http.get(`/${appA.id}/tickets`, { query });

    it("lists only the app's tickets, newest first, with pagination", async () => {
      const res = await listA({ limit: 2, page: 2 });
      expect(res.status).toBe(200);
      expect(res.body.pagination).toEqual({
        page: 2,
        limit: 2,
        total: 5,
        pages: 3,
        totalCapped: false,
        next: expect.any(String),
      });
      expect(ids(res)).toEqual([idOf(a[2]), idOf(a[1])]);
      const all = await listA();
      expect(ids(all)).toEqual([...a].reverse().map(idOf));
    });

    it.each([
      [{ status: 'closed' }, [0]],
      [{ topic: 'billing' }, [1]],
      [{ priority: 'urgent' }, [2]],
      [{ shopId: 'shop-9' }, [2]],
      [{ email: ' VIP@example.com ' }, [3]],
      [{ startDate: '2025-01-02', endDate: '2025-01-04' }, [3, 2, 1]],
      [{ endDate: '2025-01-01' }, [0]],
      [{ startDate: '2025-01-04T12:00:00.000Z' }, [4, 3]],
      [{ search: 'ALPHA' }, [0]],
      [{ search: 'a.b(c)' }, [1]],
      [{ search: 'vip@' }, [3]],
      [{ search: '.*' }, []],
    ])('filters by %p', async (query, expected) => {
      const res = await listA(query);
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual(expected.map((index) => idOf(a[index])));
    });

    it.each([
      [{ sortBy: 'priority', sortOrder: 'desc' }, [2, 4, 3, 1, 0]],
      [{ sortBy: 'status', sortOrder: 'asc' }, [1, 2, 3, 4, 0]],
      [{ sortBy: 'subject', sortOrder: 'asc' }, [0, 3, 4, 2, 1]],
      [{ sortBy: 'createdAt', sortOrder: 'asc' }, [0, 1, 2, 3, 4]],
      [{ sortBy: 'updatedAt', sortOrder: 'desc' }, [4, 3, 2, 1, 0]],
    ])('sorts by %p', async (query, expected) => {
      expect(ids(await listA(query))).toEqual(expected.map((index) => idOf(a[index])));
    });

    it.each([
      [{ status: 'open' }, /status/],
      [{ topic: 'x' }, /topic/],
      [{ priority: 'x' }, /priority/],
      [{ sortBy: 'email' }, /sortBy/],
      [{ sortOrder: 'up' }, /sortOrder/],
      [{ search: 'x'.repeat(101) }, /search/],
      [{ startDate: 'yesterday' }, /startDate/],
      [{ startDate: '2025-02-30' }, /startDate/],
      [{ startDate: '2025-01-05', endDate: '2025-01-01' }, /startDate must not be after endDate/],
      [{ limit: 101 }, /limit/],
      [{ appId: 'some-app' }, /appId should not exist/],
    ])('answers 400 for %p', async (query, message) => {
      const res = await listA(query);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(message);
    });

    it('lists every app in the global family, or one app with appId', async () => {
      const all = await viewer.http.get('/tickets/');
      expect(all.status).toBe(200);
      expect(all.body.pagination.total).toBe(6);
      const onlyB = await viewer.http.get('/tickets', { query: { appId: appB.id } });
      expect(ids(onlyB)).toEqual([idOf(b[0])]);
      const vip = await viewer.http.get('/tickets', {
        query: { email: 'vip@example.com', sortOrder: 'asc' },
      });
      expect(ids(vip)).toEqual([idOf(b[0]), idOf(a[3])]);
      expect((await viewer.http.get('/tickets', { query: { status: 'bogus' } })).status).toBe(400);
    });

    it('answers 404 for an unknown app, and an empty list for an app without tickets', async () => {
      const res = await viewer.http.get('/unknown-app/tickets');
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, error: 'App not found' });
      const empty = await viewer.http.get(`/${(await seedApp(t)).id}/tickets`);
      expect(empty.status).toBe(200);
      expect(empty.body).toMatchObject({ data: [], pagination: { total: 0 } });
    });
  });

  describe('get, update, status, delete', () => {
    it('gets a ticket in both families; another app, a malformed or unknown id is 404', async () => {
      const ticket = await create(appA.id);
      expect((await viewer.http.get(`/${appA.id}/tickets/${ticket._id}`)).body.data).toMatchObject({
        _id: ticket._id,
        subject: 'Cannot log in',
      });
      expect((await viewer.http.get(`/tickets/${ticket._id}`)).body.data._id).toBe(ticket._id);
      for (const url of [
        `/${appB.id}/tickets/${ticket._id}`,
        `/${appA.id}/tickets/not-an-id`,
        `/${appA.id}/tickets/65a1b2c3d4e5f6a7b8c9d0e1`,
        '/tickets/not-an-id',
        '/tickets/65a1b2c3d4e5f6a7b8c9d0e1',
      ]) {
        const res = await viewer.http.get(url);
        expect({ url, status: res.status, body: res.body }).toEqual({
          url,
          status: 404,
          body: { success: false, error: 'Ticket not found' },
        });
      }
    });

    it('updates priority and topic in the app family', async () => {
      const ticket = await create(appA.id);
      const res = await user.http.patch(`/${appA.id}/tickets/${ticket._id}`, {
        priority: 'high',
        topic: 'technical',
      });
      expect(res.status).toBe(200);
      expect(res.body.message).toBe('Ticket updated');
      expect(res.body.data).toMatchObject({ priority: 'high', topic: 'technical', status: 'pending' });
      expect(new Date(res.body.data.updatedAt).getTime()).toBeGreaterThanOrEqual(
        new Date(ticket.updatedAt).getTime(),
      );
      const stored = await ticketModel(t).findById(ticket._id).lean();
      expect(stored).toMatchObject({ priorityRank: 2, statusRank: 0 });
    });

    it('updates status and priority in the global family but not the topic', async () => {
      const ticket = await create(appB.id);
      const res = await user.http.patch(`/tickets/${ticket._id}`, { status: 'in_progress', priority: 'low' });
      expect(res.body.data).toMatchObject({ status: 'in_progress', priority: 'low' });
      const topic = await user.http.patch(`/tickets/${ticket._id}`, { topic: 'billing' });
      expect(topic.status).toBe(400);
      expect(topic.body.error).toMatch(/topic should not exist/);
    });

    it.each([
      [{}, /at least one of status, priority, topic/],
      [{ priority: 'extreme' }, /priority/],
      [{ status: 'done' }, /status/],
      [{ email: 'x@example.com' }, /email should not exist/],
      // null is no value of these enums: it used to be stored, and the ticket then broke its response schema
      [{ status: 'pending', topic: null }, /topic/],
      [{ priority: null }, /priority/],
      [{ status: null }, /status/],
    ])('answers 400 to PATCH %p', async (body, message) => {
      const ticket = await create(appA.id);
      const res = await user.http.patch(`/${appA.id}/tickets/${ticket._id}`, body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(message);
    });

    it('records resolvedAt on resolve, keeps it on close, clears it on reopen', async () => {
      const ticket = await create(appA.id);
      const asked = Date.now();
      const resolved = await user.http.patch(`/${appA.id}/tickets/${ticket._id}/status`, {
        status: 'resolved',
      });
      expect(resolved.status).toBe(200);
      expect(resolved.body.message).toBe('Ticket status updated');
      const resolvedAt = resolved.body.data.resolvedAt;
      // Stamped while the request ran: not before it was sent, not after it was answered.
      expect(new Date(resolvedAt).getTime()).toBeGreaterThanOrEqual(asked);
      expect(new Date(resolvedAt).getTime()).toBeLessThanOrEqual(Date.now());

      const closed = await user.http.patch(`/tickets/${ticket._id}/status`, { status: 'closed' });
      expect(closed.body.data).toMatchObject({ status: 'closed', resolvedAt });

      const reopened = await user.http.patch(`/${appA.id}/tickets/${ticket._id}`, { status: 'pending' });
      expect(reopened.body.data.status).toBe('pending');
      expect(reopened.body.data.resolvedAt).toBeUndefined();

      const direct = await user.http.patch(`/tickets/${ticket._id}`, { status: 'closed' });
      expect(direct.body.data.resolvedAt).toEqual(expect.any(String));
    });

    it('answers 400 for a missing or unknown status and 404 for another app', async () => {
      const ticket = await create(appA.id);
      for (const body of [{}, { status: 'open' }]) {
        const res = await user.http.patch(`/${appA.id}/tickets/${ticket._id}/status`, body);
        expect(res.status).toBe(400);
        expect(res.body.error).toMatch(/status/);
      }
      expect(
        (await user.http.patch(`/${appB.id}/tickets/${ticket._id}/status`, { status: 'closed' })).status,
      ).toBe(404);
      expect((await user.http.patch(`/tickets/${'0'.repeat(24)}/status`, { status: 'closed' })).status).toBe(
        404,
      );
      expect((await viewer.http.get(`/tickets/${ticket._id}`)).body.data.status).toBe('pending');
    });

    it('deletes in both families; another app cannot delete it', async () => {
      const first = await create(appA.id);
      const second = await create(appA.id);
      const denied = await user.http.delete(`/${appB.id}/tickets/${first._id}`);
      expect(denied.status).toBe(404);
      expect(await ticketModel(t).exists({ _id: first._id })).toBeTruthy();

      const res = await user.http.delete(`/${appA.id}/tickets/${first._id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, message: 'Ticket deleted' });
      expect(await ticketModel(t).exists({ _id: first._id })).toBeNull();
      expect((await user.http.delete(`/${appA.id}/tickets/${first._id}`)).status).toBe(404);

      expect((await user.http.delete(`/tickets/${second._id}`)).body.success).toBe(true);
      expect((await viewer.http.get(`/tickets/${second._id}`)).status).toBe(404);
    });
  });

  describe('DELETE /{appId}/tickets (bulk)', () => {
    it('deletes the listed tickets of that app only and counts them', async () => {
      const mine = [await create(appA.id), await create(appA.id), await create(appA.id)];
      const theirs = await create(appB.id);
      const res = await user.http.delete(`/${appA.id}/tickets/`, {
        ids: [mine[0]._id, mine[1]._id, mine[1]._id, theirs._id, '65a1b2c3d4e5f6a7b8c9d0e1'],
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, message: '2 ticket(s) deleted', deletedCount: 2 });
      expect(await ticketModel(t).exists({ _id: mine[2]._id })).toBeTruthy();
      expect(await ticketModel(t).exists({ _id: theirs._id })).toBeTruthy();
      expect(await ticketModel(t).exists({ _id: mine[0]._id })).toBeNull();
    });

    it.each([
      [{}, /ids/],
      [{ ids: [] }, /ids must contain at least 1/],
      [{ ids: ['nope'] }, /ids must be a mongodb id/i],
      [{ ids: Array(101).fill('65a1b2c3d4e5f6a7b8c9d0e1') }, /ids must contain no more than 100/],
      [{ ids: 'x' }, /ids/],
    ])('answers 400 for %p', async (body, message) => {
      const res = await user.http.delete(`/${appA.id}/tickets`, body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(message);
    });
  });

  describe('messages', () => {
    it('adds messages and lists them oldest first, within the app only', async () => {
      const ticket = await create(appA.id);
      const first = await user.http.post(`/${appA.id}/tickets/${ticket._id}/messages`, {
        content: 'We are looking into it.',
        authorName: 'Support',
        authorEmail: 'Agent@Example.com',
      });
      expect(first.status).toBe(201);
      expect(first.body.message).toBe('Message added');
      expect(first.body.data).toMatchObject({
        content: 'We are looking into it.',
        isCustomer: false,
        authorName: 'Support',
        authorEmail: 'agent@example.com',
      });
      expect(first.body.data._id).toMatch(/^[a-f\d]{24}$/);
      await user.http.post(`/${appA.id}/tickets/${ticket._id}/messages`, {
        content: 'Thanks!',
        isCustomer: true,
      });

      const list = await viewer.http.get(`/${appA.id}/tickets/${ticket._id}/messages`);
      expect(list.status).toBe(200);
      expect(list.body.data.map((m: { content: string }) => m.content)).toEqual([
        'We are looking into it.',
        'Thanks!',
      ]);
      expect((await viewer.http.get(`/tickets/${ticket._id}`)).body.data.messageCount).toBe(2);

      expect((await viewer.http.get(`/${appB.id}/tickets/${ticket._id}/messages`)).status).toBe(404);
      const foreign = await user.http.post(`/${appB.id}/tickets/${ticket._id}/messages`, { content: 'x' });
      expect(foreign.status).toBe(404);
      expect((await viewer.http.get(`/${appA.id}/tickets/${ticket._id}/messages`)).body.data).toHaveLength(2);
    });

    it('emits ticket.customer_message for customer messages only', async () => {
      const ticket = await create(appA.id, { subject: 'Refund please' });
      const events: TicketCustomerMessageEvent[] = [];
      const listener = (event: TicketCustomerMessageEvent) => events.push(event);
      t.app.get(EventEmitter2).on(TicketEvents.CustomerMessage, listener);
      try {
        await user.http.post(`/${appA.id}/tickets/${ticket._id}/messages`, { content: 'Staff reply' });
        const res = await user.http.post(`/${appA.id}/tickets/${ticket._id}/messages`, {
          content: 'x'.repeat(300),
          isCustomer: true,
          authorName: 'Customer',
        });
        expect(events).toHaveLength(1);
        expect(events[0]).toBeInstanceOf(TicketCustomerMessageEvent);
        expect(events[0]).toMatchObject({
          appId: appA.id,
          ticketId: ticket._id,
          messageId: res.body.data._id,
          subject: 'Refund please',
          email: 'customer@example.com',
          authorName: 'Customer',
        });
        expect(events[0].excerpt).toHaveLength(200);
      } finally {
        t.app.get(EventEmitter2).off(TicketEvents.CustomerMessage, listener);
      }
    });

    it.each([
      [{}, /content/],
      [{ content: '   ' }, /content should not be empty/],
      [{ content: 'x'.repeat(10_001) }, /content/],
      [{ content: 'x', isCustomer: 'yes' }, /isCustomer/],
      [{ content: 'x', authorEmail: 'nope' }, /authorEmail/],
    ])('answers 400 for %p', async (body, message) => {
      const ticket = await create(appA.id);
      const res = await user.http.post(`/${appA.id}/tickets/${ticket._id}/messages`, body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(message);
    });

    it('answers 404 for an unknown ticket and 409 when the thread is full', async () => {
      expect(
        (await user.http.post(`/${appA.id}/tickets/65a1b2c3d4e5f6a7b8c9d0e1/messages`, { content: 'x' }))
          .status,
      ).toBe(404);
      expect((await viewer.http.get(`/${appA.id}/tickets/bad/messages`)).status).toBe(404);
      const ticket = await create(appA.id);
      await ticketModel(t).updateOne(
        { _id: ticket._id },
        { $set: { messageCount: MAX_MESSAGES_PER_TICKET } },
      );
      const res = await user.http.post(`/${appA.id}/tickets/${ticket._id}/messages`, { content: 'one more' });
      expect(res.status).toBe(409);
      expect(res.body.error).toMatch(/at most 500 messages/);
    });
  });

  describe('OpenAPI', () => {
    it('documents the 15 spec routes, the download route and the two body types of creation', async () => {
      const doc = (await t.http.get('/docs-json')).body;
      const operations = Object.entries<Record<string, unknown>>(doc.paths)
        .filter(([path]) => /^\/(\{appId\}\/)?tickets/.test(path))
        .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
      expect(operations.sort()).toEqual(
        [
          'GET /tickets',
          'GET /tickets/{messageId}',
          'PATCH /tickets/{messageId}',
          'DELETE /tickets/{messageId}',
          'PATCH /tickets/{messageId}/status',
          'GET /{appId}/tickets/stats',
          'POST /{appId}/tickets',
          'GET /{appId}/tickets',
          'DELETE /{appId}/tickets',
          'GET /{appId}/tickets/{messageId}',
          'PATCH /{appId}/tickets/{messageId}',
          'DELETE /{appId}/tickets/{messageId}',
          'PATCH /{appId}/tickets/{messageId}/status',
          'POST /{appId}/tickets/{messageId}/messages',
          'GET /{appId}/tickets/{messageId}/messages',
          'GET /{appId}/tickets/{messageId}/attachments/{key}',
        ].sort(),
      );
      const content = doc.paths['/{appId}/tickets'].post.requestBody.content;
      expect(Object.keys(content).sort()).toEqual(['application/json', 'multipart/form-data']);
      const schema = doc.components.schemas.CreateTicketBody;
      expect(schema.required).toEqual(expect.arrayContaining(['email', 'subject', 'message']));
      expect(schema.properties.files).toMatchObject({
        type: 'array',
        items: { type: 'string', format: 'binary' },
      });
    });
  });

  describe('indexes', () => {
    const indexKeys = TicketSchema.indexes().map(([fields]) => Object.keys(fields));
    const hasIndex = (...prefix: string[]) =>
      indexKeys.some((keys) => prefix.every((field, position) => keys[position] === field));

    it('serves the default sort and date range of the app list, the statistics and the global list', () => {
      expect(hasIndex('appId', 'createdAt', '_id')).toBe(true);
      expect(hasIndex('createdAt', '_id')).toBe(true);
    });

    it.each(['status', 'shopId', 'email'])(
      'serves the %s filter of the app list with the default sort',
      (field) => {
        expect(hasIndex('appId', field, 'createdAt', '_id')).toBe(true);
      },
    );

    it('leads every index with appId but the global list’s and the one that finds an author across apps', () => {
      const global = indexKeys.filter((keys) => keys[0] !== 'appId');
      // The e-mail one also serves a person's export and GDPR erasure (docs/operations/data-retention.md).
      expect(global).toEqual([
        ['createdAt', '_id'],
        ...['status', 'topic', 'priority', 'email'].map((field) => [field, 'createdAt', '_id']),
        ...['priorityRank', 'statusRank', 'subject', 'updatedAt'].map((key) => [key, '_id']),
        ['messages.authorEmail'],
      ]);
    });

    it('creates the declared indexes in the database', async () => {
      await ticketModel(t).syncIndexes();
      const stored = await ticketModel(t).collection.indexes();
      expect(stored.length).toBe(TicketSchema.indexes().length + 1);
    });
  });
});

import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { Worker } from 'node:worker_threads';
import { Role } from '../src/common/auth/roles';
import { EmailService } from '../src/email/email.service';
import { EmailJob } from '../src/email/jobs/schemas/email-job.schema';
import { TEMPLATE_LIMITS } from '../src/email/templates/template-limits';
import { splitAtLinks } from '../src/email/tracking/tracked-html';
import { TestApp } from './helpers/app';
import { drainEmailQueue } from './helpers/email-queue';
import { seedApp } from './helpers/factories';
import { createSession, Session } from './helpers/session';
import { type TestSmtpServer } from './helpers/smtp';
import { TEMPLATE_BOMBS } from './helpers/template-bombs';
import { useMailApp } from './helpers/mail-app';

/**
 * Template cost is bounded by construction (docs/decisions/security-template-sandbox.md): templates compile
 * and render in worker threads with a deadline and a heap, partials, decorators and `log` are refused, and a
 * render over the budget fails alone while the server answers.
 */
describe('Template limits', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  let user: Session;
  let appId: string;

  const mailApp = useMailApp();
  beforeAll(() => {
    ({ t, smtp } = mailApp);
  });
  beforeEach(async () => {
    user = await createSession(t, Role.User);
    appId = (await seedApp(t)).id;
  });

  const emailTemplate = (body: Record<string, unknown>) =>
    user.http.post('/admin/templates', {
      name: `t${Math.random()}`,
      subject: 'Hi',
      htmlTemplate: '<p>Hi</p>',
      textTemplate: 'Hi',
      ...body,
    });
  const campaign = (body: Record<string, unknown>) =>
    user.http.post(`/admin/${appId}/newsletter/campaigns`, {
      name: 'c',
      subject: 'Hi',
      htmlContent: '<p>Hi</p>',
      ...body,
    });
  const newsletterTemplate = (body: Record<string, unknown>) =>
    user.http.post(`/admin/${appId}/newsletter/templates`, {
      name: 'n',
      subject: 'Hi',
      htmlContent: '<p>Hi</p>',
      ...body,
    });

  it('refuses a 100,001-character field with a 400 naming the field and the limit', async () => {
    const res = await emailTemplate({ htmlTemplate: 'x'.repeat(TEMPLATE_LIMITS.maxLength + 1) });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false });
    expect(res.body.error).toMatch(new RegExp(`^htmlTemplate.* ${TEMPLATE_LIMITS.maxLength} characters`));
  });

  it.each([
    ['an e-mail template', 'htmlTemplate', 'textTemplate'],
    ['a campaign', 'htmlContent', 'textContent'],
    ['a newsletter template', 'htmlContent', 'textContent'],
  ])('refuses partials, decorators and log in %s, naming the field', async (what, html, text) => {
    const save = { 'an e-mail template': emailTemplate, 'a campaign': campaign }[what] ?? newsletterTemplate;
    const partialBomb = await save({ [html]: TEMPLATE_BOMBS.partials });
    expect(partialBomb.status).toBe(400);
    expect(partialBomb.body.error).toMatch(new RegExp(`^${html}: .*partials.* not supported`));
    for (const source of ['{{> footer}}', '{{#> layout}}x{{/layout}}', '{{* decorate}}x']) {
      const res = await save({ [text]: source });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(new RegExp(`^${text}: .*(partial|decorator)`));
    }
    const log = await save({ [html]: '<p>{{log email firstName}}</p>' });
    expect(log.status).toBe(400);
    expect(log.body.error).toMatch(new RegExp(`^${html}: .*unknown helper log`));
    const literal = await save({ [text]: TEMPLATE_BOMBS.logLiteral });
    expect(literal.status).toBe(400);
    expect(literal.body.error).toMatch(new RegExp(`^${text}: `));
  });

  it('keeps the common syntax working: {{x}}, {{{x}}}, #if, #unless, #each, #with, else, lookup', async () => {
    const source =
      '{{a}} {{{b}}} {{#if c}}C{{else}}no C{{/if}} {{#unless d}}D{{/unless}} ' +
      '{{#each list}}[{{this}}]{{else}}empty{{/each}} {{#with o}}{{p}}{{/with}} {{lookup o "p"}}';
    const res = await emailTemplate({ name: 'common', htmlTemplate: source, textTemplate: source });
    expect(res.status).toBe(200);
    await t.app.get(EmailService).enqueueEmail({
      to: 'ada@example.com',
      template: { name: 'common' },
      variables: { a: '<a>', b: '<b>', c: true, list: [1, 2], o: { p: 'P' } },
    });
    await drainEmailQueue(t);
    const [mail] = smtp.received;
    expect(mail.raw).toContain('<a> <b> C D [1][2] P P');
    expect(mail.raw).toContain('&lt;a&gt; <b> C D [1][2] P P');
  });

  it('refuses a template over the budget (400 naming the field); /health/live answers meanwhile', async () => {
    // The bomb's arrival in a template worker is the moment the server is busy with it.
    let reachedWorker!: () => void;
    const inWorker = new Promise<'worker'>((resolve) => (reachedWorker = () => resolve('worker')));
    // eslint-disable-next-line @typescript-eslint/unbound-method -- called below with the worker as `this`
    const post = Worker.prototype.postMessage;
    const spy = jest.spyOn(Worker.prototype, 'postMessage').mockImplementation(function (
      this: Worker,
      message: unknown,
    ) {
      if (JSON.stringify(message).includes('a.b.c.d a.b.c.d')) reachedWorker();
      return post.call(this, message);
    });
    try {
      let settled = false;
      const bomb = emailTemplate({ htmlTemplate: TEMPLATE_BOMBS.literal }).finally(() => (settled = true));
      expect(await Promise.race([inWorker, bomb.then(() => 'answered')])).toBe('worker');
      const health = await t.http.get('/health/live');
      expect(health.status).toBe(200);
      expect(settled).toBe(false);
      const res = await bomb;
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^htmlTemplate: /);
    } finally {
      spy.mockRestore();
    }
  });

  it('refuses deep nesting over the budget, naming the field and the budget', async () => {
    const res = await campaign({ textContent: TEMPLATE_BOMBS.deepNesting });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(
      /^textContent: .*(over the template budget \(\d+ ms and \d+ MB per render\)|nests too deeply)/,
    );
  });

  it('fails only the message whose render goes over the budget, with the reason', async () => {
    expect(
      (await emailTemplate({ name: 'loops', htmlTemplate: TEMPLATE_BOMBS.loops, textTemplate: 'x' })).status,
    ).toBe(200);
    const email = t.app.get(EmailService);
    const huge = Array.from({ length: 400 }, (_, i) => i);
    const bomb = await email.enqueueEmail({
      to: 'bomb@example.com',
      template: { name: 'loops' },
      variables: { a: huge },
    });
    const fine = await email.enqueueEmail({
      to: 'fine@example.com',
      template: { name: 'loops' },
      variables: { a: [1, 2] },
    });
    await drainEmailQueue(t, { deadlineMs: 60_000 });
    const jobs = t.app.get<Model<EmailJob>>(getModelToken(EmailJob.name));
    const bombJob = await jobs.findById(bomb.id).lean().exec();
    expect(bombJob).toMatchObject({ status: 'dead' });
    expect(bombJob?.lastError).toMatch(/over the template budget/);
    expect((await jobs.findById(fine.id).lean().exec())?.status).toBe('completed');
    expect(smtp.received.map((mail) => mail.to)).toEqual([['fine@example.com']]);
  });

  it('finds campaign links in HTML full of unclosed <a tags', () => {
    // A regex over the whole HTML re-scanned to the end for each `<a`: 300 KB of them took about 25 s. Its
    // time is measured by `npm run bench -- input-scans` (a timing bound here would fail on a busy machine).
    const html = '<a href="https://shop.example.com/">shop</a>' + '<a '.repeat(100_000);
    expect(splitAtLinks(html).links).toEqual(['https://shop.example.com/']);
  });
});

import { Controller, Get, Module } from '@nestjs/common';
import { SkipThrottle } from '@nestjs/throttler';
import { Public } from '../src/common/auth/public.decorator';
import { ok } from '../src/common/http/envelope';
import { RouteLimit } from '../src/common/http/rate-limit';
import { Role } from '../src/common/auth/roles';
import { createTestApp, TestApp } from './helpers/app';
import { createSession, type Session } from './helpers/session';

/**
 * The guards read a route's metadata once, at its first request, and keep the answer per route
 * (docs/decisions/api-nest-route-cost.md): these routes share one controller, so a decision kept for the
 * wrong handler would show.
 */
@Controller('__route-cache')
class RouteCacheController {
  @Get('open')
  @Public()
  open() {
    return ok('open');
  }

  /** No decorator: deny by default (admins only). */
  @Get('closed')
  closed() {
    return ok('closed');
  }

  @Get('limited')
  @Public()
  @RouteLimit(2)
  limited() {
    return ok('limited');
  }

  @Get('unthrottled')
  @Public()
  @SkipThrottle({ default: true, route: true })
  unthrottled() {
    return ok('unthrottled');
  }
}

@Module({ controllers: [RouteCacheController] })
class RouteCacheModule {}

describe('Route metadata read once per route (issue 28)', () => {
  let t: TestApp;
  let admin: Session;
  let viewer: Session;
  const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });

  beforeAll(async () => {
    process.env.RATE_LIMIT_PER_MINUTE = '5';
    t = await createTestApp({ imports: [RouteCacheModule] });
    admin = await createSession(t, Role.Admin);
    viewer = await createSession(t, Role.Viewer);
  });
  afterAll(async () => {
    delete process.env.RATE_LIMIT_PER_MINUTE;
    await t.close();
  });

  it('still denies an unannotated route after its public neighbour was answered, and on every later request', async () => {
    expect((await t.http.get('/__route-cache/open', from('198.51.100.1'))).status).toBe(200);
    for (let i = 0; i < 2; i += 1) {
      const anonymous = await t.http.get('/__route-cache/closed', from('198.51.100.1'));
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual({ success: false, error: 'Missing bearer token' });
      expect((await viewer.http.get('/__route-cache/closed', from('198.51.100.2'))).status).toBe(403);
    }
    expect((await admin.http.get('/__route-cache/closed', from('198.51.100.3'))).status).toBe(200);
    expect((await t.http.get('/__route-cache/open', from('198.51.100.1'))).status).toBe(200);
  });

  it("keeps counting a route's own limit per client once its limits are known", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      statuses.push((await t.http.get('/__route-cache/limited', from('198.51.100.10'))).status);
    }
    expect(statuses).toEqual([200, 200, 429, 429]);
    const refused = await t.http.get('/__route-cache/limited', from('198.51.100.10'));
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await t.http.get('/__route-cache/limited', from('198.51.100.11'))).status).toBe(200);
  });

  it('sends the budget headers from the known limits, counting down per client', async () => {
    const first = await t.http.get('/__route-cache/open', from('198.51.100.20'));
    const second = await t.http.get('/__route-cache/open', from('198.51.100.20'));
    expect(first.headers['x-ratelimit-limit']).toBe('5');
    expect(first.headers['x-ratelimit-remaining']).toBe('4');
    expect(second.headers['x-ratelimit-remaining']).toBe('3');
    expect(Number(second.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
    // The route limit sets no headers of its own.
    const limited = await t.http.get('/__route-cache/limited', from('198.51.100.21'));
    expect(Object.keys(limited.headers).filter((name) => name.endsWith('-route'))).toEqual([]);
  });

  it('leaves a route that skips throttling uncounted, while its neighbours still count', async () => {
    const client = from('198.51.100.30');
    for (let i = 0; i < 7; i += 1) {
      const answer = await t.http.get('/__route-cache/unthrottled', client);
      expect(answer.status).toBe(200);
      expect(answer.headers['x-ratelimit-limit']).toBeUndefined();
    }
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await t.http.get('/__route-cache/open', client)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });
});

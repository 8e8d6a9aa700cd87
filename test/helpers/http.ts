import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { inApplicationScope } from '../query-shapes/query-shape-recorder';

export interface TestResponse {
  status: number;
  headers: LightMyRequestResponse['headers'];
  // Tests read arbitrary JSON shapes; each assertion states the shape it expects.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS' | 'HEAD';

export interface RequestOptions {
  headers?: Record<string, string>;
  query?: Record<string, string | number | boolean>;
  /** JSON body; use `payload` for a raw one. */
  body?: unknown;
  payload?: InjectOptions['payload'];
}

/**
 * Requests through Fastify's in-process injection: the whole HTTP pipeline without a socket. Default
 * headers (e.g. a bearer token) are set per client; `as()` derives a client with other credentials.
 */
export class HttpClient {
  constructor(
    private readonly app: NestFastifyApplication,
    private readonly defaultHeaders: Record<string, string> = {},
  ) {}

  with(headers: Record<string, string>): HttpClient {
    return new HttpClient(this.app, { ...this.defaultHeaders, ...headers });
  }

  async request(method: Method, url: string, options: RequestOptions = {}): Promise<TestResponse> {
    const query = Object.fromEntries(Object.entries(options.query ?? {}).map(([k, v]) => [k, String(v)]));
    // The request's queries are the application's: recorded for the index-coverage gate.
    const response = await inApplicationScope(() =>
      this.app.inject({
        method,
        url,
        query,
        headers: { ...this.defaultHeaders, ...options.headers },
        ...(options.body !== undefined ? { payload: options.body as InjectOptions['payload'] } : {}),
        ...(options.payload !== undefined ? { payload: options.payload } : {}),
      }),
    );
    const text = response.body;
    let body: unknown = undefined;
    if (String(response.headers['content-type'] ?? '').includes('json') && text.length > 0)
      body = JSON.parse(text);
    return { status: response.statusCode, headers: response.headers, body, text };
  }

  get(url: string, options?: RequestOptions) {
    return this.request('GET', url, options);
  }
  post(url: string, body?: unknown, options?: RequestOptions) {
    return this.request('POST', url, { ...options, body });
  }
  put(url: string, body?: unknown, options?: RequestOptions) {
    return this.request('PUT', url, { ...options, body });
  }
  patch(url: string, body?: unknown, options?: RequestOptions) {
    return this.request('PATCH', url, { ...options, body });
  }
  delete(url: string, body?: unknown, options?: RequestOptions) {
    return this.request('DELETE', url, { ...options, body });
  }
}

import { HttpStatus } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import type {
  OperationObject,
  ParameterObject,
  ReferenceObject,
  RequestBodyObject,
  ResponseObject,
  SchemaObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { MAX_PATH_SEGMENT } from '../http/edge-errors';
import { TOO_MANY_REQUESTS_MESSAGE } from '../http/rate-limit';
import { UNDECLARED_FIELD } from './bad-request-examples';
import { REFUSALS, type SecurityScheme } from './security-schemes';
import { OBJECT_ID_PATTERN, type ValidatedSchemas } from './validation-constraints';

/**
 * Passes over the generated document for what holds for many routes at once (the global limiter, the body
 * parsers, the exception filter), so no route can forget it. Each pass is idempotent.
 */

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

export interface Operation {
  path: string;
  method: (typeof METHODS)[number];
  operation: OperationObject;
}

export function operationsOf(document: OpenAPIObject): Operation[] {
  const found: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation) found.push({ path, method, operation });
    }
  }
  return found;
}

const ERROR_REF = '#/components/schemas/ErrorSchema';

/** What each error status means, and an example message the server really sends for it. */
const ERRORS: Record<number, { description: string; example: string }> = {
  [HttpStatus.BAD_REQUEST]: {
    description: 'Invalid input; the message names the offending fields',
    // Routes with a body show their own (badRequestOf); the router's answer to a malformed path escape.
    example: 'Malformed URL',
  },
  [HttpStatus.UNAUTHORIZED]: {
    description: 'Missing or invalid credentials',
    example: 'Invalid credentials',
  },
  [HttpStatus.FORBIDDEN]: {
    description: 'The credentials do not allow this operation',
    example: 'Your role does not allow this operation',
  },
  [HttpStatus.NOT_FOUND]: {
    description: 'Not found (unknown, malformed or other-tenant ids all answer this)',
    example: 'Not found',
  },
  // No example: each route documents its own 409 message (`@ApiErrorMessage`), or the build fails.
  [HttpStatus.CONFLICT]: {
    description: 'Conflicts with an existing record or the current state',
    example: '',
  },
  [HttpStatus.PAYLOAD_TOO_LARGE]: {
    description: 'Request body too large',
    example: 'Request body is too large',
  },
  [HttpStatus.UNSUPPORTED_MEDIA_TYPE]: {
    description: 'The Content-Type of the body is not one this route reads',
    example: 'Unsupported media type',
  },
  [HttpStatus.URI_TOO_LONG]: {
    description: `A path parameter is longer than the router accepts (${MAX_PATH_SEGMENT} characters)`,
    example: `A path segment is longer than ${MAX_PATH_SEGMENT} characters`,
  },
  [HttpStatus.TOO_MANY_REQUESTS]: {
    description: 'Rate limit exceeded; retry after the Retry-After header',
    example: TOO_MANY_REQUESTS_MESSAGE,
  },
  [HttpStatus.INTERNAL_SERVER_ERROR]: {
    description: 'Unexpected error; the message carries an errorId that is also in the server log',
    example: 'Internal server error (errorId: 0b6a3c2e-5d1f-4c1e-9a8b-2f1e0c9d7a64)',
  },
};

function errorResponse(status: number, example: string): ResponseObject {
  return {
    description: ERRORS[status]?.description ?? 'Error',
    content: {
      'application/json': { schema: { $ref: ERROR_REF }, example: { success: false, error: example } },
    },
  };
}

function exampleFor(
  { path, method, operation }: Operation,
  status: number,
  notFound: NotFoundMessages,
  badRequestOf: BadRequestMessages,
): string {
  if (status === Number(HttpStatus.CONFLICT)) {
    throw new Error(`OpenAPI: ${method.toUpperCase()} ${path} documents a 409 without its message`);
  }
  if (status === Number(HttpStatus.BAD_REQUEST)) {
    const own = badRequestOf(operation, method);
    if (own) return own;
    const parameters = (operation.parameters ?? []) as ParameterObject[];
    if (parameters.some((p) => p.in === 'query')) return UNDECLARED_FIELD;
  }
  const scheme = Object.keys(operation.security?.[0] ?? {})[0] as SecurityScheme | undefined;
  if ((status === 401 || status === 403) && scheme && REFUSALS[scheme]) return REFUSALS[scheme][status];
  if (status === 404) return notFound[operation.tags?.[0] ?? ''] ?? ERRORS[status].example;
  return ERRORS[status].example;
}

/** The 404 message of a route: `User not found` for the Users tag, and so on. */
export type NotFoundMessages = Record<string, string>;

/** The 400 a route's body answers (see bad-request-examples.ts), when it has a body DTO. */
export type BadRequestMessages = (operation: OperationObject, method: string) => string | undefined;

/**
 * Statuses every route can answer, whatever its decorators say: 429 (the global limiter) and 500 everywhere;
 * 400 (malformed JSON, validation), 413 (body limit) and 415 (content type) where there is a body; 400 where
 * there are query parameters (unknown ones are refused); 400, 404 and 414 where there are path parameters (a
 * record they name may not exist; the router refuses malformed or overlong ones). Then every error response
 * gets the error schema and an example message of its status.
 */
export function addCommonResponses(
  document: OpenAPIObject,
  notFound: NotFoundMessages,
  badRequestOf: BadRequestMessages,
): void {
  for (const entry of operationsOf(document)) {
    const { operation } = entry;
    const statuses: number[] = [HttpStatus.TOO_MANY_REQUESTS, HttpStatus.INTERNAL_SERVER_ERROR];
    const parameters = (operation.parameters ?? []) as ParameterObject[];
    if (operation.requestBody) {
      statuses.push(HttpStatus.BAD_REQUEST, HttpStatus.PAYLOAD_TOO_LARGE, HttpStatus.UNSUPPORTED_MEDIA_TYPE);
    }
    if (parameters.some((p) => p.in === 'query')) statuses.push(HttpStatus.BAD_REQUEST);
    if (parameters.some((p) => p.in === 'path')) {
      // A malformed escape in the path is a 400 and an overlong segment a 414, before any route runs.
      statuses.push(HttpStatus.BAD_REQUEST, HttpStatus.NOT_FOUND, HttpStatus.URI_TOO_LONG);
    }
    for (const status of statuses) operation.responses[status] ??= errorResponse(status, '');

    for (const [code, response] of Object.entries(operation.responses)) {
      const status = Number(code);
      if (status < 400 || !ERRORS[status] || !response || '$ref' in response) continue;
      // Keep a route's own example (`@ApiErrorMessage`) and description when it says more than the generic
      // one.
      const ownExample = (response.content?.['application/json']?.example as { error?: unknown } | undefined)
        ?.error;
      const example =
        typeof ownExample === 'string' && ownExample
          ? ownExample
          : exampleFor(entry, status, notFound, badRequestOf);
      const own = response.description;
      const replaced = errorResponse(status, example);
      if (own && own !== 'Error') replaced.description = own;
      operation.responses[code] = replaced;
    }
  }
}

/**
 * One credential per operation: a credential decorator on the controller and another on the handler both
 * add theirs, and the handler's (the last) is the one the guard applies. A decorator may list alternatives
 * of its credential (`@ApiKeyAuth({ endUser: 'optional' })`: the key alone, or the key and an end-user
 * token); each names its required scheme first, and those stay together.
 */
export function dedupeSecurity(document: OpenAPIObject): void {
  for (const { operation } of operationsOf(document)) {
    if (!operation.security || operation.security.length <= 1) continue;
    const unique = [...new Map(operation.security.map((entry) => [JSON.stringify(entry), entry])).values()];
    const required = (entry: Record<string, string[]>) => Object.keys(entry)[0];
    const applied = required(unique[unique.length - 1]);
    operation.security = unique.filter((entry) => required(entry) === applied);
  }
}

function refName(schema: SchemaObject | ReferenceObject | undefined): string | undefined {
  return schema && '$ref' in schema ? schema.$ref.split('/').pop() : undefined;
}

/**
 * The ValidationPipe refuses properties a DTO does not declare (`forbidNonWhitelisted`), in the body and
 * in every nested object it validates (`@ValidateNested`): say so with `additionalProperties: false` on the
 * request body schemas and the validated objects inside them. PATCH bodies also need one property at least.
 */
export function closeRequestBodies(document: OpenAPIObject, validated: ValidatedSchemas): void {
  const schemas = (document.components?.schemas ?? {}) as Record<string, SchemaObject>;
  const close = (name: string | undefined, seen: Set<string>) => {
    if (!name || seen.has(name) || !schemas[name]?.properties) return;
    seen.add(name);
    const schema = schemas[name];
    schema.additionalProperties = false;
    // Nested objects are checked (and closed) only where the DTO says `@ValidateNested()`.
    for (const property of validated.nested.get(name) ?? []) {
      const value = schema.properties?.[property];
      const items = value && !('$ref' in value) && value.type === 'array' ? value.items : undefined;
      close(refName(value) ?? refName(items), seen);
    }
  };
  for (const { method, operation } of operationsOf(document)) {
    const body = operation.requestBody as RequestBodyObject | undefined;
    for (const media of Object.values(body?.content ?? {})) {
      const name = refName(media.schema);
      close(name, new Set());
      if (method === 'patch' && name && !schemas[name].required?.length) schemas[name].minProperties = 1;
    }
  }
}

const OBJECT_ID_PARAMETERS = new Set(['id', 'keyId', 'messageId', 'templateId', 'contactId']);

/**
 * Path parameters that name a stored record are ObjectIds: say so, so generated values look like real ids
 * (a malformed one is answered 404 like an unknown one), unless the route states its own pattern.
 * `/admin/apps/{id}` is the one `id` that is an app id.
 */
export function describeObjectIdParameters(document: OpenAPIObject): void {
  for (const { path, operation } of operationsOf(document)) {
    for (const parameter of (operation.parameters ?? []) as ParameterObject[]) {
      if (parameter.in !== 'path' || !OBJECT_ID_PARAMETERS.has(parameter.name)) continue;
      if (parameter.name === 'id' && path.startsWith('/admin/apps/')) continue;
      // A route that documents a pattern of its own (an e-mail Message-ID is no ObjectId) keeps it.
      parameter.schema = { type: 'string', pattern: OBJECT_ID_PATTERN, ...(parameter.schema ?? {}) };
    }
  }
}

const SAMPLE_BY_FORMAT: Record<string, string> = {
  email: 'jane@example.com',
  'date-time': '2030-01-31T12:00:00.000Z',
  uri: 'https://example.com/page',
};

/**
 * A value the schema accepts, from its example, default, first enum value or format; else nothing. A string
 * without any of those gets no made-up text (staff would send it as is) and an id none (it would be a 404):
 * an optional one is left out, and a body with a required one keeps no example, which the OpenAPI tests
 * catch.
 */
function sampleOf(
  schema: SchemaObject | ReferenceObject | undefined,
  schemas: Record<string, SchemaObject>,
  depth = 0,
): unknown {
  if (!schema || depth > 4) return undefined;
  if ('$ref' in schema) return sampleOf(schemas[refName(schema) ?? ''], schemas, depth + 1);
  if (schema.example !== undefined) return schema.example as unknown;
  if (schema.default !== undefined) return schema.default as unknown;
  if (schema.enum?.length) return schema.enum[0] as unknown;
  if (schema.format && SAMPLE_BY_FORMAT[schema.format]) return SAMPLE_BY_FORMAT[schema.format];
  if (schema.type === 'object' && schema.properties) {
    const sample: Record<string, unknown> = {};
    for (const [name, property] of Object.entries(schema.properties)) {
      const required = schema.required?.includes(name) ?? false;
      const value = sampleOf(property, schemas, depth + 1);
      if (value !== undefined) sample[name] = value;
      else if (required) return undefined;
    }
    return sample;
  }
  if (schema.type === 'array') {
    const item = sampleOf(schema.items, schemas, depth + 1);
    return item === undefined ? undefined : [item];
  }
  if (schema.type === 'boolean') return true;
  if (schema.type === 'integer' || schema.type === 'number') return schema.minimum ?? 1;
  return undefined;
}

/**
 * A request example for every JSON body that has none, built from the examples, defaults and enums of its
 * schema (Swagger UI pre-fills it, and a fuzzer starts from it). Bodies whose required fields cannot all be
 * filled that way keep no example rather than a wrong one.
 */
export function addRequestExamples(document: OpenAPIObject): void {
  const schemas = (document.components?.schemas ?? {}) as Record<string, SchemaObject>;
  for (const { operation } of operationsOf(document)) {
    const media = (operation.requestBody as RequestBodyObject | undefined)?.content?.['application/json'];
    if (!media || media.example !== undefined || media.examples) continue;
    const sample = sampleOf(media.schema, schemas);
    if (sample && typeof sample === 'object' && Object.keys(sample).length > 0) media.example = sample;
  }
}

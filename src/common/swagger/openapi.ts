import type { INestApplication, Type } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ModulesContainer } from '@nestjs/core';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { dump } from 'js-yaml';
import type { AppConfig } from '../../config/env';
import { DirectRoutes } from '../http/direct-routes';
import type { RequestBodyObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { emptyBodyMessage } from './bad-request-examples';
import {
  addCommonResponses,
  type BadRequestMessages,
  addRequestExamples,
  closeRequestBodies,
  dedupeSecurity,
  describeObjectIdParameters,
} from './document-passes';
import { ErrorSchema } from './envelope.decorators';
import { declarePublicOperations, dropPatchDefaults } from './client-passes';
import { addPropertyExamples } from './examples';
import { namedSchemas } from './named-schemas';
import { SECURITY } from './security-schemes';
import { authorizeDialogPlugin, downloadUrlPlugin, signInFromLoginPlugin } from './swagger-ui-plugins';
import { applyValidationConstraints } from './validation-constraints';

export { SECURITY } from './security-schemes';

/** Every tag a controller uses, with what it groups, and the 404 message of its records. */
const TAGS: { name: string; description: string; notFound?: string }[] = [
  { name: 'Health', description: 'Liveness and database status (no credential)' },
  { name: 'Auth', description: 'Back-office login, token refresh and the signed-in user' },
  {
    name: 'Magic link',
    description: "Passwordless sign-in of an app's end users: e-mail a single-use link, verify its token",
  },
  {
    name: 'Users',
    description: 'Back-office (admin) users, their roles, settings and passwords',
    notFound: 'User not found',
  },
  {
    name: 'Apps',
    description: 'Client applications: records, features, allowed origins and publishable keys',
    notFound: 'App not found',
  },
  {
    name: 'Sender domains',
    description:
      "Domains an app sends from: the service's DKIM key, the DNS records to publish and their checks " +
      '(docs/operations/sending-domains.md)',
    notFound: 'Sender domain not found',
  },
  {
    name: 'API Keys',
    description: "Secret API keys of the apps (`sk_<appId>_…`), for the apps' backends",
    notFound: 'API key not found',
  },
  {
    name: 'Tickets',
    description: 'Support tickets per app, their message threads and attachments',
    notFound: 'Ticket not found',
  },
  {
    name: 'Wants',
    description: 'Feature requests and votes: the public board (API key) and its moderation',
    notFound: 'Want not found',
  },
  {
    name: 'Feedback',
    description: 'Feedback sent from the apps, and its moderation',
    notFound: 'Feedback not found',
  },
  {
    name: 'Joinlist',
    description: "Newsletter signup from a web page (the app's publishable key) and the unsubscribe page",
  },
  {
    name: 'Chat routing',
    description:
      "Per-app webhooks of the chat notification channels (the app's rule, else the global default, else the log)",
    notFound: 'Chat routing rule not found',
  },
  {
    name: 'E-mail templates',
    description: 'Handlebars templates of the e-mails the service sends',
    notFound: 'Template not found',
  },
  {
    name: 'E-mail jobs',
    description: 'The e-mail queue: jobs, their status and counters',
    notFound: 'E-mail job not found',
  },
  {
    name: 'E-mail events',
    description:
      'Raw e-mail events (sent, delivered, opened, clicked, bounced, …) by filter, message or campaign',
    notFound: 'No events for this message',
  },
  {
    name: 'E-mail analytics',
    description:
      'Campaign, recipient, person and overall e-mail figures, read from counters kept as events arrive',
    notFound: 'Campaign not found',
  },
  {
    name: 'Webhooks',
    description:
      'Receivers of e-mail providers’ lifecycle events (Standard Webhooks signature on the primary one)',
  },
  {
    name: 'Contacts',
    description:
      'People across apps: consent per category and its history, opt-out, data export, GDPR delete',
    notFound: 'Contact not found',
  },
  { name: 'Newsletter', description: 'Per-app newsletter: subscribers, campaigns and newsletter templates' },
  { name: 'Tracking', description: 'Open pixel and click redirects of campaign mail (signed tokens)' },
  {
    name: 'Audit log',
    description:
      'Staff actions, one hash-chained record each (admin only; append-only, no route changes one)',
  },
];

/** `UsersController.list` → `usersList`: the fallback for a route without an explicit `operationId`. */
function fallbackOperationId(controllerKey: string, methodKey: string): string {
  const resource = controllerKey.replace(/Controller$/, '');
  return `${resource.charAt(0).toLowerCase()}${resource.slice(1)}${methodKey.charAt(0).toUpperCase()}${methodKey.slice(1)}`;
}

/** Where `@ApiBody()` and its kin keep their parameters (`DECORATORS.API_PARAMETERS`, not exported). */
const API_PARAMETERS = 'swagger/apiParameters';

/** The classes of every handler parameter (the DTOs of bodies and queries among them). */
function handlerParameterClasses(app: INestApplication): Set<Type<unknown>> {
  const classes = new Set<Type<unknown>>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const { metatype } of module.controllers.values()) {
      if (!metatype) continue;
      const prototype = metatype.prototype as object;
      for (const method of Object.getOwnPropertyNames(prototype)) {
        const types = (Reflect.getMetadata('design:paramtypes', prototype, method) ?? []) as unknown[];
        // A body documented by `@ApiBody({ type })` (a subclass that adds multipart fields) has the rules of
        // the DTO it extends.
        const handler = (prototype as Record<string, unknown>)[method];
        const documented = (
          typeof handler === 'function' ? (Reflect.getMetadata(API_PARAMETERS, handler) ?? []) : []
        ) as { in?: string; type?: unknown }[];
        for (const parameter of documented) if (parameter.in === 'body') types.push(parameter.type);
        for (const type of types) if (typeof type === 'function') classes.add(type as Type<unknown>);
      }
    }
  }
  return classes;
}

/**
 * Where clients send requests: first the server that served the document (relative, so Swagger UI's
 * "Try it out" stays on the instance it was opened from), then PUBLIC_BASE_URL when it is configured, the
 * address generated clients default to.
 */
function addServers(builder: DocumentBuilder, app: INestApplication): void {
  builder.addServer('/', 'The server that serves this document');
  const publicUrl = app
    .get<ConfigService<AppConfig, true>>(ConfigService)
    .get('PUBLIC_BASE_URL', { infer: true });
  if (publicUrl) builder.addServer(publicUrl.replace(/\/+$/, ''), 'The public address (PUBLIC_BASE_URL)');
}

/** The 400 example of an operation whose JSON body is a DTO: what that DTO answers to `{}`. */
function bodyBadRequests(classes: Set<Type<unknown>>): BadRequestMessages {
  const byName = new Map([...classes].map((dto) => [dto.name, dto]));
  return (operation, method) => {
    const body = operation.requestBody as RequestBodyObject | undefined;
    const ref = (body?.content?.['application/json']?.schema as { $ref?: string } | undefined)?.$ref;
    const dto = byName.get(ref?.split('/').pop() ?? '');
    return dto ? emptyBodyMessage(dto, method === 'patch') : undefined;
  };
}

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Multi-app administration service')
    .setDescription(
      'Back-office login and admin users, apps and keys, tickets, wants, feedback, contacts, e-mail engine and ' +
        'newsletters. Every response uses the envelope `{success, data?, message?, pagination?}`; every error is ' +
        '`{success:false, error}`.',
    )
    .setVersion('1.0.0')
    // The project's license (package.json): generated packages (clients/) carry it.
    .setLicense('MIT', 'https://spdx.org/licenses/MIT.html')
    // First: the Authorize dialog lists the schemes in this order, and this one is the staff's.
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description:
          'A back-office user (staff). To sign in here, run **POST /auth/login** with "Try it out" and your ' +
          'e-mail and password: the token it answers fills this in (as does POST /auth/refresh). It lasts ' +
          'until it expires or you press Logout here; a token obtained elsewhere can also be pasted.',
      },
      SECURITY.bearer,
    )
    .addApiKey(
      // In backticks: a bare `<appId>` is read as an HTML tag by the Markdown renderer and disappears.
      { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'Secret API key `sk_<appId>_…`' },
      SECURITY.apiKey,
    )
    .addApiKey(
      {
        type: 'apiKey',
        in: 'header',
        name: 'X-App-Key',
        description: 'Publishable app key `pk_…` plus a matching `Origin`',
      },
      SECURITY.appKey,
    )
    .addApiKey(
      {
        type: 'apiKey',
        in: 'header',
        name: 'X-End-User-Token',
        description:
          "An app end user's token (audience `end-user`), from the magic-link sign-in. `Authorization: Bearer` " +
          'with this token is still accepted; on the wants routes a back-office token there is passed over',
      },
      SECURITY.endUser,
    );
  addServers(builder, app);
  for (const tag of TAGS) builder.addTag(tag.name, tag.description);
  const document = SwaggerModule.createDocument(app, builder.build(), {
    extraModels: [ErrorSchema],
    operationIdFactory: fallbackOperationId,
  });
  Object.assign(document.components?.schemas ?? {}, namedSchemas());
  // Routes Fastify answers without Nest's router (the open pixel) describe themselves.
  Object.assign(document.paths, app.get(DirectRoutes).documentation());
  const parameterClasses = handlerParameterClasses(app);
  const validated = applyValidationConstraints(document, parameterClasses);
  closeRequestBodies(document, validated);
  describeObjectIdParameters(document);
  dropPatchDefaults(document);
  addPropertyExamples(document);
  addRequestExamples(document);
  dedupeSecurity(document);
  declarePublicOperations(document);
  const notFound = Object.fromEntries(
    TAGS.filter((t) => t.notFound).map((t) => [t.name, t.notFound as string]),
  );
  addCommonResponses(document, notFound, bodyBadRequests(parameterClasses));
  return document;
}

export function setupOpenApi(app: INestApplication): void {
  const document = buildOpenApiDocument(app);
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'docs-json',
    // Served below instead: Swagger's own route would write the YAML again on every request.
    raw: ['json'],
    swaggerOptions: {
      // A token (pasted, or filled in by the sign-in plugin) survives a reload of the page.
      persistAuthorization: true,
      plugins: [downloadUrlPlugin, signInFromLoginPlugin, authorizeDialogPlugin],
    },
  });
  serveYaml(app, document);
}

/**
 * `/docs-yaml`: the document as YAML (about half a megabyte, tens of milliseconds of CPU to write), written
 * on the first request and kept, like the Swagger UI's own copy: an anonymous request costs a copy, not a
 * write.
 */
function serveYaml(app: INestApplication, document: OpenAPIObject): void {
  let yaml: string | undefined;
  app.getHttpAdapter().get('/docs-yaml', (_request: FastifyRequest, reply: FastifyReply) => {
    // The same options Swagger's own route used: no anchors, values YAML cannot hold skipped.
    yaml ??= dump(document, { skipInvalid: true, noRefs: true });
    return reply.type('text/yaml').send(yaml);
  });
}

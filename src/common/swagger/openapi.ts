import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { OperationObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { ErrorSchema } from './envelope.decorators';

/** Names of the security schemes; the credential decorators refer to them. */
export const SECURITY = {
  bearer: 'bearer',
  apiKey: 'api-key',
  appKey: 'app-key',
  endUser: 'end-user',
} as const;

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Multi-app administration service')
    .setDescription(
      'Back-office login and admin users, apps and keys, tickets, wants, feedback, contacts, e-mail engine and ' +
        'newsletters. Every response uses the envelope `{success, data?, message?, pagination?}`; every error is ' +
        '`{success:false, error}`.',
    )
    .setVersion('1.0.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, SECURITY.bearer)
    .addApiKey(
      { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'Secret API key sk_<appId>_…' },
      SECURITY.apiKey,
    )
    .addApiKey(
      {
        type: 'apiKey',
        in: 'header',
        name: 'X-App-Key',
        description: 'Publishable app key pk_… plus a matching Origin',
      },
      SECURITY.appKey,
    )
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: "An app end user's token (audience end-user), from the magic-link sign-in",
      },
      SECURITY.endUser,
    )
    .build();
  const document = SwaggerModule.createDocument(app, config, { extraModels: [ErrorSchema] });
  addUnexpectedErrorResponse(document);
  return document;
}

/** Every operation may answer 500 with the error envelope (and an errorId); say so once, here. */
function addUnexpectedErrorResponse(document: OpenAPIObject): void {
  for (const pathItem of Object.values(document.paths)) {
    for (const operation of Object.values(pathItem)) {
      if (!operation || typeof operation !== 'object' || !('responses' in operation)) continue;
      (operation as OperationObject).responses['500'] ??= {
        description: 'Unexpected error; the message carries an errorId that is also in the server log',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorSchema' } } },
      };
    }
  }
}

export function setupOpenApi(app: INestApplication): void {
  const document = buildOpenApiDocument(app);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json', yamlDocumentUrl: 'docs-yaml' });
}

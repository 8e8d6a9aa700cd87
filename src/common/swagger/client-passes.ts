import type { OpenAPIObject } from '@nestjs/swagger';
import type {
  ReferenceObject,
  RequestBodyObject,
  SchemaObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { operationsOf } from './document-passes';

type Schemas = Record<string, SchemaObject>;

/**
 * The component schemas a schema reaches through `$ref` (properties, items, compositions), itself included.
 */
function reachable(start: SchemaObject | ReferenceObject | undefined, schemas: Schemas, found: Set<string>) {
  const visit = (schema: SchemaObject | ReferenceObject | boolean | undefined): void => {
    if (!schema || typeof schema === 'boolean') return;
    if ('$ref' in schema) {
      const name = schema.$ref.split('/').pop() ?? '';
      if (found.has(name) || !schemas[name]) return;
      found.add(name);
      visit(schemas[name]);
      return;
    }
    for (const property of Object.values(schema.properties ?? {})) visit(property);
    visit(schema.items);
    visit(schema.additionalProperties);
    for (const part of [...(schema.allOf ?? []), ...(schema.oneOf ?? []), ...(schema.anyOf ?? [])])
      visit(part);
  };
  visit(start);
  return found;
}

/** The component schemas the request bodies of the matching operations reach. */
function bodySchemas(document: OpenAPIObject, ofPatch: boolean): Set<string> {
  const schemas = (document.components?.schemas ?? {}) as Schemas;
  const found = new Set<string>();
  for (const { method, operation } of operationsOf(document)) {
    if ((method === 'patch') !== ofPatch) continue;
    const body = operation.requestBody as RequestBodyObject | undefined;
    for (const media of Object.values(body?.content ?? {})) reachable(media.schema, schemas, found);
  }
  return found;
}

/**
 * A PATCH changes the fields it sends and nothing else, so no schema a PATCH body reaches carries a
 * `default`: generated models fill defaults in and send them (a rename through the Python client turned an
 * inactive app active again), and openapi-typescript makes a field with a default required. Update DTOs
 * inherit defaults through `PartialType`; nested inputs (a user's profile) are shared with a create body,
 * where the default is real: there it moves into the description, so creation still says what it gets.
 */
export function dropPatchDefaults(document: OpenAPIObject): void {
  const schemas = (document.components?.schemas ?? {}) as Schemas;
  const created = bodySchemas(document, false);
  for (const name of bodySchemas(document, true)) {
    for (const property of Object.values(schemas[name].properties ?? {})) {
      if ('$ref' in property || property.default === undefined) continue;
      if (created.has(name)) {
        const atCreation = `When a record is created without it: \`${JSON.stringify(property.default)}\`.`;
        property.description = property.description
          ? `${property.description.replace(/\.?$/, '.')} ${atCreation}`
          : atCreation;
      }
      delete property.default;
    }
  }
}

/**
 * Every operation states its security: the credential decorators add their scheme, and an operation with
 * none is one that takes no credential of the document's schemes (`@Public()`, a provider webhook's
 * signature, the open pixel). Without `security: []` a generated client would apply a document-wide
 * default. The OpenAPI test checks these against the routes' policies, so an undecided route (which the
 * guard treats as admin-only) cannot pass as public.
 */
export function declarePublicOperations(document: OpenAPIObject): void {
  for (const { operation } of operationsOf(document)) operation.security ??= [];
}

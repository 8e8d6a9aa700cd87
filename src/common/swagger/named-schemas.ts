import type { ReferenceObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/**
 * Component schemas written by hand, for shapes a DTO class cannot express (a body that is an object or an
 * array of objects). A route refers to one by the `$ref` `namedSchema` returns; buildOpenApiDocument adds
 * every one declared. Generated clients turn an inline `oneOf` into broken types
 * (docs/api/generated-clients.md), a named one into a model of its own.
 */
const NAMED_SCHEMAS = new Map<string, SchemaObject>();

export function namedSchema(name: string, schema: SchemaObject): ReferenceObject {
  const known = NAMED_SCHEMAS.get(name);
  if (known && known !== schema) throw new Error(`OpenAPI: two schemas named ${name}`);
  NAMED_SCHEMAS.set(name, schema);
  return { $ref: `#/components/schemas/${name}` };
}

export function namedSchemas(): Record<string, SchemaObject> {
  return Object.fromEntries(NAMED_SCHEMAS);
}

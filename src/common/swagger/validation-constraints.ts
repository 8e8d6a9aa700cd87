import type { Type } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { getMetadataStorage, ValidationTypes } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import { EMAIL_ADDRESS_PATTERN, IS_EMAIL_ADDRESS, LOCAL_PART_MAX } from '../validation/email-address';

/** MongoDB ObjectIds as the service writes them (24 lower-case hex digits). */
export const OBJECT_ID_PATTERN = '^[0-9a-f]{24}$';

/**
 * What one class-validator rule means in the document. The rules are the truth (they are what the server
 * enforces); `@ApiProperty` options written by hand win where they say something, so a DTO can still refine a
 * description or an example. Rules without a JSON Schema counterpart (`isNotIn`, custom checks) are left out.
 */
function constraintOf(rule: ValidationMetadata): SchemaObject | undefined {
  const [first, second] = (rule.constraints ?? []) as unknown[];
  switch (rule.name) {
    case IS_EMAIL_ADDRESS:
      return {
        type: 'string',
        format: 'email',
        pattern: EMAIL_ADDRESS_PATTERN.source,
        description: `An e-mail address: a dot-atom local part of at most ${LOCAL_PART_MAX} characters (no quotes, spaces or control characters), @, a domain name`,
      };
    case 'isUrl':
      return { type: 'string', format: 'uri' };
    case 'isMongoId':
      return { type: 'string', pattern: OBJECT_ID_PATTERN };
    case 'isIso8601':
    case 'isDateString':
      return { type: 'string', format: 'date-time' };
    case 'isDate':
      return { type: 'string', format: 'date-time' };
    case 'isString':
      return { type: 'string' };
    case 'isBoolean':
      return { type: 'boolean' };
    case 'isInt':
      return { type: 'integer' };
    case 'isNotEmpty':
      return { minLength: 1 };
    case 'minLength':
      return { minLength: Number(first) };
    case 'maxLength':
      return { maxLength: Number(first) };
    case 'isLength':
      return second === undefined
        ? { minLength: Number(first) }
        : { minLength: Number(first), maxLength: Number(second) };
    case 'min':
      return { minimum: Number(first) };
    case 'max':
      return { maximum: Number(first) };
    case 'arrayMinSize':
      return { minItems: Number(first) };
    case 'arrayMaxSize':
      return { maxItems: Number(first) };
    case 'arrayUnique':
      return { uniqueItems: true };
    case 'isIn':
      return Array.isArray(first) ? { enum: first as unknown[] } : undefined;
    case 'isEnum':
      return Array.isArray(second) ? { enum: second as unknown[] } : undefined;
    case 'matches':
      return first instanceof RegExp ? { pattern: first.source } : undefined;
    default:
      return undefined;
  }
}

/** Keywords that only make sense for one JSON type (so `minLength` never lands on an array or a number). */
const STRING_ONLY = new Set(['minLength', 'maxLength', 'pattern', 'format']);

function apply(target: SchemaObject, constraint: SchemaObject, each: boolean): void {
  // `each: true` rules describe the items of an array property.
  const items =
    target.type === 'array' && target.items && !('$ref' in target.items) ? target.items : undefined;
  if (each && !items) return;
  const schema = each && items ? items : target;
  for (const [keyword, value] of Object.entries(constraint) as [keyof SchemaObject, unknown][]) {
    if (keyword === 'type') {
      // Nest infers `object` for union types (`string | null`): the validator knows better.
      if (schema.type === undefined || (schema.type === 'object' && !schema.properties))
        schema.type = value as string;
      else if (schema.type === 'number' && value === 'integer') schema.type = 'integer';
      continue;
    }
    if (STRING_ONLY.has(keyword) && schema.type !== undefined && schema.type !== 'string') continue;
    if (schema[keyword] === undefined) (schema as Record<string, unknown>)[keyword] = value;
  }
}

/**
 * The rules of every validated class, by class name (the name of its schema), each with the rules of its
 * base classes. `classes` adds the DTOs that declare no rule of their own (a `PartialType(…)` subclass,
 * `class X extends Y {}`): class-validator's registry only knows the classes that do.
 */
function rulesByClassName(classes: Iterable<Type<unknown>>): Map<string, ValidationMetadata[]> {
  // class-validator keeps its registry private; reading it is the only way to list every validated class.
  const storage = getMetadataStorage() as unknown as {
    validationMetadatas: Map<unknown, ValidationMetadata[]>;
  };
  const byName = new Map<string, ValidationMetadata[]>();
  for (const target of new Set([...storage.validationMetadatas.keys(), ...classes])) {
    if (typeof target !== 'function' || !target.name) continue;
    const rules: ValidationMetadata[] = [];
    for (
      let current: unknown = target;
      typeof current === 'function';
      current = Object.getPrototypeOf(current)
    ) {
      rules.push(...(storage.validationMetadatas.get(current) ?? []));
    }
    if (rules.length > 0) byName.set(target.name, rules);
  }
  return byName;
}

export interface ValidatedSchemas {
  /** Component schemas of classes that the ValidationPipe checks (their unknown properties are refused). */
  names: Set<string>;
  /** For each of them, the properties that hold a nested validated object (`@ValidateNested`). */
  nested: Map<string, Set<string>>;
}

/**
 * Writes the constraints the ValidationPipe enforces (lengths, formats, enums, patterns, bounds) into the
 * component schemas of the validated classes, so the document and the server agree by construction.
 */
export function applyValidationConstraints(
  document: OpenAPIObject,
  classes: Iterable<Type<unknown>>,
): ValidatedSchemas {
  const schemas = (document.components?.schemas ?? {}) as Record<string, SchemaObject>;
  const validated: ValidatedSchemas = { names: new Set(), nested: new Map() };
  for (const [name, rules] of rulesByClassName(classes)) {
    const schema = schemas[name];
    if (!schema?.properties) continue;
    validated.names.add(name);
    const nested = new Set<string>();
    for (const rule of rules) {
      if (rule.type === ValidationTypes.NESTED_VALIDATION) nested.add(rule.propertyName);
      if (rule.type !== ValidationTypes.CUSTOM_VALIDATION) continue;
      const property = schema.properties[rule.propertyName] as SchemaObject | undefined;
      const constraint = constraintOf(rule);
      if (!property || '$ref' in property || !constraint) continue;
      apply(property, constraint, rule.each);
    }
    validated.nested.set(name, nested);
  }
  return validated;
}

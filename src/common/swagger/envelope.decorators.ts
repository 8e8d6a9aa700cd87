import { applyDecorators, HttpStatus, Type } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import type { ReferenceObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/** Swagger models of the envelope (docs/architecture.md "Envelope and errors"). */
export class PaginationSchema {
  @ApiProperty({ example: 1 }) page: number;
  @ApiProperty({ example: 20 }) limit: number;
  @ApiProperty({
    example: 42,
    description: 'Matches, counted up to 10,000: with `totalCapped` there are more (a lower bound)',
  })
  total: number;
  @ApiProperty({ example: 3 }) pages: number;
  @ApiProperty({
    example: false,
    description: 'The count stopped at 10,000 matches: `total` is a lower bound',
  })
  totalCapped: boolean;
  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description: 'Pass as `after` to read the next page (any depth); null on the last page',
  })
  next: string | null;
}

export class ErrorSchema {
  @ApiProperty({ example: false }) success: false;
  @ApiProperty({ example: 'email must be an email' }) error: string;
}

export class DoneSchema {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty() message: string;
}

type Model = Type<unknown> | 'object';

function dataSchema(model: Model, isArray: boolean): SchemaObject | ReferenceObject {
  const item: SchemaObject | ReferenceObject =
    model === 'object' ? { type: 'object' } : { $ref: getSchemaPath(model) };
  return isArray ? { type: 'array', items: item } : item;
}

function models(model: Model): Type<unknown>[] {
  return model === 'object' ? [PaginationSchema, ErrorSchema] : [model, PaginationSchema, ErrorSchema];
}

export interface EnvelopeOptions {
  status?: HttpStatus;
  description?: string;
  isArray?: boolean;
  /** The `message` the route adds to the envelope, shown as its example. */
  message?: string;
}

/** `{success:true, data:<model>, message?}`. */
export function ApiOkEnvelope(model: Model, options: EnvelopeOptions = {}) {
  const properties: Record<string, SchemaObject | ReferenceObject> = {
    success: { type: 'boolean', example: true },
    data: dataSchema(model, options.isArray ?? false),
  };
  if (options.message) properties.message = { type: 'string', example: options.message };
  return applyDecorators(
    ApiExtraModels(...models(model)),
    ApiResponse({
      status: options.status ?? HttpStatus.OK,
      description: options.description ?? 'Success',
      schema: { type: 'object', required: ['success', 'data'], properties },
    }),
  );
}

/** `{success:true, data:[<model>], pagination}`. */
export function ApiPageEnvelope(model: Model, description = 'One page of results') {
  return applyDecorators(
    ApiExtraModels(...models(model)),
    ApiResponse({
      status: HttpStatus.OK,
      description,
      schema: {
        type: 'object',
        required: ['success', 'data', 'pagination'],
        properties: {
          success: { type: 'boolean', example: true },
          data: dataSchema(model, true),
          pagination: { $ref: getSchemaPath(PaginationSchema) },
        },
      },
    }),
  );
}

/** `{success:true, message}`, with the message the route sends as the example. */
export function ApiDoneEnvelope(message: string, description = 'Success') {
  return applyDecorators(
    ApiExtraModels(DoneSchema),
    ApiResponse({
      status: HttpStatus.OK,
      description,
      type: DoneSchema,
      example: { success: true, message },
    }),
  );
}

const ERROR_DESCRIPTIONS: Partial<Record<HttpStatus, string>> = {
  [HttpStatus.BAD_REQUEST]: 'Invalid input; the message names the offending fields',
  [HttpStatus.UNAUTHORIZED]: 'Missing or invalid credentials',
  [HttpStatus.FORBIDDEN]: 'The credentials do not allow this operation',
  [HttpStatus.NOT_FOUND]: 'Not found',
  [HttpStatus.CONFLICT]: 'Conflicts with an existing record',
  [HttpStatus.PAYLOAD_TOO_LARGE]: 'Request body too large',
  [HttpStatus.TOO_MANY_REQUESTS]: 'Rate limit exceeded; see Retry-After',
  [HttpStatus.SERVICE_UNAVAILABLE]: 'Service unavailable',
};

/**
 * Documents one error status with the message the route really sends for it, where the generic example of
 * its status (or of its credential) would be wrong (the document passes keep it).
 */
export function ApiErrorMessage(status: HttpStatus, error: string, description?: string) {
  return applyDecorators(
    ApiExtraModels(ErrorSchema),
    ApiResponse({
      status,
      description: description ?? ERROR_DESCRIPTIONS[status] ?? 'Error',
      content: {
        'application/json': {
          schema: { $ref: getSchemaPath(ErrorSchema) },
          example: { success: false, error },
        },
      },
    }),
  );
}

/** Documents the error envelope for the given statuses (500 is documented globally). */
export function ApiErrors(...statuses: HttpStatus[]) {
  return applyDecorators(
    ApiExtraModels(ErrorSchema),
    ...statuses.map((status) =>
      ApiResponse({ status, description: ERROR_DESCRIPTIONS[status] ?? 'Error', type: ErrorSchema }),
    ),
  );
}

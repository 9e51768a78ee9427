// One error shape for every failure: {error: {status, code, message, field?, value?, requestId}}.
// A 400 always names the request field at fault and the value it had; a 5xx never carries a stack
// or an internal message (those go to the log under the same request id).
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { describeValue } from '../errors.js';
import { StoreError } from '../store/errors.js';
import { ControlError } from './control.js';
import { AuthUnavailableError } from './keystone.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly value?: unknown,
  ) {
    super(message);
  }
}

const CONTEXT: Record<string, string> = {
  body: 'body',
  querystring: 'query',
  params: 'params',
  headers: 'headers',
};

export function fieldPath(context: string, segments: string[]): string {
  let out = context;
  for (const s of segments)
    out += /^\d+$/.test(s) ? `[${s}]` : /^[A-Za-z_$][\w$-]*$/.test(s) ? `.${s}` : `[${JSON.stringify(s)}]`;
  return out;
}

function lookup(input: unknown, segments: string[]): unknown {
  let cur = input;
  for (const s of segments) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, s)) return undefined;
    cur = (cur as Record<string, unknown>)[s];
  }
  return cur;
}

/** Values are echoed short: a 1 MB string comes back as its first characters. */
function shown(value: unknown): unknown {
  if (typeof value === 'string') return value.length > 100 ? `${value.slice(0, 97)}...` : value;
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return value;
  return value === undefined ? undefined : describeValue(value);
}

function validationError(err: FastifyError, request: FastifyRequest): ApiError {
  const context = err.validationContext ?? 'body';
  const name = CONTEXT[context] ?? context;
  const source = (request as unknown as Record<string, unknown>)[name === 'query' ? 'query' : context];
  const issue = hasZodFastifySchemaValidationErrors(err) ? err.validation[0] : undefined;
  if (issue === undefined) return new ApiError(400, 'invalid-request', `${name}: ${err.message}`, name);
  const segments = issue.instancePath.split('/').filter((s) => s !== '');
  if (issue.keyword === 'unrecognized_keys') {
    const key = String((issue.params as { keys?: unknown[] }).keys?.[0] ?? '');
    const field = fieldPath(name, [...segments, key]);
    return new ApiError(
      400,
      'unknown-field',
      `${field}: unknown field`,
      field,
      shown(lookup(source, [...segments, key])),
    );
  }
  const field = fieldPath(name, segments);
  const value = lookup(source, segments);
  const message = value === undefined ? `missing (${issue.message})` : issue.message;
  return new ApiError(400, 'invalid-field', `${field}: ${message}`, field, shown(value));
}

/** Fastify's own errors (bad JSON, media type, size, URL), by code. */
const FRAMEWORK: Record<string, { status: number; code: string; field: string; message: string }> = {
  FST_ERR_CTP_INVALID_JSON: {
    status: 400,
    code: 'invalid-json',
    field: 'body',
    message: 'body: not valid JSON',
  },
  // Fastify 5's name for it (FST_ERR_CTP_INVALID_JSON above is older versions').
  FST_ERR_CTP_INVALID_JSON_BODY: {
    status: 400,
    code: 'invalid-json',
    field: 'body',
    message: 'body: not valid JSON',
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    status: 400,
    code: 'invalid-json',
    field: 'body',
    message: 'body: empty, but Content-Type says JSON (send {} or no Content-Type)',
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: 'unsupported-media-type',
    field: 'headers.content-type',
    message: 'headers.content-type: send application/json',
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    status: 400,
    code: 'invalid-content-length',
    field: 'headers.content-length',
    message: 'headers.content-length: does not match the body',
  },
  FST_ERR_CTP_BODY_TOO_LARGE: {
    status: 413,
    code: 'body-too-large',
    field: 'body',
    message: 'body: too large',
  },
  FST_ERR_CTP_INVALID_CONTENT_ENCODING: {
    status: 415,
    code: 'unsupported-encoding',
    field: 'headers.content-encoding',
    message: 'headers.content-encoding: not supported',
  },
  FST_ERR_BAD_URL: { status: 400, code: 'invalid-url', field: 'url', message: 'url: not a valid URL' },
  FST_ERR_ASYNC_CONSTRAINT: { status: 400, code: 'invalid-url', field: 'url', message: 'url: not routable' },
};

export function toApiError(err: unknown, request: FastifyRequest): ApiError {
  if (err instanceof ApiError) return err;
  const fe = err as FastifyError;
  if (fe?.validation !== undefined) return validationError(fe, request);
  if (typeof fe?.code === 'string' && FRAMEWORK[fe.code] !== undefined) {
    const f = FRAMEWORK[fe.code]!;
    return new ApiError(f.status, f.code, f.message, f.field);
  }
  if (err instanceof ControlError) return new ApiError(409, 'conflict', err.message);
  if (err instanceof StoreError) return new ApiError(409, 'conflict', err.message.replace(/^store: /, ''));
  if (err instanceof AuthUnavailableError) return new ApiError(503, 'auth-unavailable', err.message);
  const status = typeof fe?.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) {
    const field = status === 400 ? 'request' : undefined;
    return new ApiError(status, 'bad-request', `${field ? `${field}: ` : ''}${fe.message}`, field);
  }
  return new ApiError(500, 'internal', 'internal error: see the service log under this request id');
}

/** The documented error shape. */
export function errorBody(err: ApiError, requestId: string) {
  return {
    error: {
      status: err.status,
      code: err.code,
      message: err.message,
      ...(err.field !== undefined ? { field: err.field } : {}),
      ...(err.value !== undefined ? { value: err.value } : {}),
      requestId,
    },
  };
}

export function sendError(reply: FastifyReply, err: ApiError): FastifyReply {
  return reply
    .code(err.status)
    .type('application/json; charset=utf-8')
    .send(errorBody(err, String(reply.request.id)));
}

export const notFound = (what: string, field?: string, value?: unknown): ApiError =>
  new ApiError(404, 'not-found', `${what} not found`, field, value);

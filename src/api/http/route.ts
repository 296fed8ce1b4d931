/**
 * One route of the HTTP API, declared once: method, path, who may call it,
 * the zod schemas of its path, query and body, its answers, and its handler.
 * The server registers it and the OpenAPI document describes it from the
 * same declaration, so what is documented is what is validated.
 */
import { FailureType } from '../../core/plan/failure-types.ts';
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { formatPath, type PathSegment } from '../../core/plan/site-error.ts';
import { ApiError } from './status.ts';
import { NoQuery } from './schemas.ts';

/** Who may call a route: anyone, any token, or admin tokens only. */
export type Access = 'public' | 'read' | 'write';

/** The body a route takes: JSON or YAML text, or none at all. */
export type BodyMedia = 'json' | 'yaml' | 'none';

/** Media types accepted for each kind of body. */
export const MEDIA_TYPES = {
  json: ['application/json'],
  yaml: ['application/x-yaml', 'application/yaml', 'text/yaml', 'text/x-yaml'],
  none: [],
} as const satisfies Record<BodyMedia, readonly string[]>;

/** A documented answer: a JSON schema, YAML text, other text of media type `text`, or no body. */
export type ResponseSpec = { description: string; schema?: z.ZodType; yaml?: true; text?: string };

/** What a handler answers. `yaml` is sent as `application/x-yaml` text, `text` as its own media type. */
export type RouteReply = { code: number; body?: unknown; yaml?: string; text?: { type: string; body: string }; headers?: Record<string, string> };

/** A route as declared, with its handler's input typed from its schemas. */
export type RouteSpec<P, Q, B> = {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Fastify path, e.g. `/api/v1.0/actions/:id`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  access: Access;
  params?: z.ZodType<P>;
  query?: z.ZodType<Q>;
  body?: { media: 'json' | 'yaml'; schema: z.ZodType<B>; required: boolean; description?: string };
  responses: Record<number, ResponseSpec>;
  /** Turns a body validation failure into the error to answer (to order checks as Shipyard does). */
  invalidBody?: (raw: unknown, error: z.ZodError) => ApiError;
  handle(input: { params: P; query: Q; body: B; request: FastifyRequest }): Promise<RouteReply>;
};

/** A declared route, type-erased for registration and documentation. */
export type RouteDef = Omit<RouteSpec<unknown, unknown, unknown>, 'handle' | 'invalidBody' | 'params' | 'query' | 'body'> & {
  params?: z.ZodType;
  query: z.ZodType;
  body?: { media: 'json' | 'yaml'; schema: z.ZodType; required: boolean; description?: string };
  media: BodyMedia;
  /** Validates the request against the schemas and calls the handler. */
  run(request: FastifyRequest): Promise<RouteReply>;
};

/** Every problem of a failed validation, one line each: `body.parameters.target_nodes: …`. */
export function issueMessages(error: z.ZodError, where: string): string[] {
  return error.issues.flatMap((issue) => {
    const path = issue.path.filter((s): s is PathSegment => typeof s !== 'symbol');
    const at = (extra: PathSegment[] = []) => {
      const rest = formatPath([...path, ...extra]);
      return rest === '' ? where : rest.startsWith('[') ? `${where}${rest}` : `${where}.${rest}`;
    };
    if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => `${at([key])}: unknown field`);
    return [`${at()}: ${issue.message}`];
  });
}

/** A refused request part as an {@link ApiError} of `type` listing every problem. */
export function requestError(type: FailureType, error: z.ZodError, where: string): ApiError {
  const messages = issueMessages(error, where);
  return new ApiError(type, messages.length === 1 ? (messages[0] as string) : `${messages.length} problems in the request ${where}`, messages);
}

/** Declares a route; its handler gets the validated, typed path, query and body. */
export function defineRoute<P = unknown, Q = unknown, B = undefined>(spec: RouteSpec<P, Q, B>): RouteDef {
  const query = spec.query ?? NoQuery;
  return {
    method: spec.method,
    path: spec.path,
    operationId: spec.operationId,
    summary: spec.summary,
    ...(spec.description !== undefined ? { description: spec.description } : {}),
    tag: spec.tag,
    access: spec.access,
    ...(spec.params ? { params: spec.params } : {}),
    query,
    ...(spec.body ? { body: spec.body } : {}),
    media: spec.body?.media ?? 'none',
    responses: spec.responses,
    async run(request) {
      const params = spec.params ? spec.params.safeParse(request.params) : { success: true as const, data: request.params as P };
      if (!params.success) throw requestError(FailureType.InvalidRequest, params.error, 'path');
      const q = query.safeParse(request.query ?? {});
      if (!q.success) throw requestError(FailureType.InvalidRequest, q.error, 'query');
      let body = undefined as B;
      if (spec.body) {
        const raw = request.body;
        const parsed = spec.body.schema.safeParse(raw);
        if (!parsed.success) {
          if (spec.invalidBody) throw spec.invalidBody(raw, parsed.error);
          if (raw === undefined) throw new ApiError(FailureType.InvalidRequest, `this request needs a ${spec.body.media.toUpperCase()} body`);
          throw requestError(FailureType.InvalidRequest, parsed.error, 'body');
        }
        body = parsed.data;
      }
      return spec.handle({ params: params.data, query: q.data as Q, body, request });
    },
  };
}

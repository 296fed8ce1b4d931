/**
 * The HTTP API server: Fastify with relabel's routes, token auth, Airship's
 * Status body for every error (unknown route, wrong method, body too large,
 * wrong media type, bad JSON, malformed HTTP included), and the OpenAPI
 * document. Routes are thin: they validate and call the facade.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { FailureType } from '../../core/plan/failure-types.ts';
import { createRequestAuthenticator, rememberCaller, type ApiToken, type TokenVerifier } from './auth.ts';
import type { ApiDeps } from './deps.ts';
import { openApiDocument } from './openapi.ts';
import { apiMetrics } from './metrics.ts';
import { defineRoute, MEDIA_TYPES, type Access, type BodyMedia, type RouteDef, type RouteReply } from './route.ts';
import { actionRoutes } from '../shipyard/routes-actions.ts';
import { actionStepRoutes } from '../shipyard/routes-action-steps.ts';
import { noteRoutes } from '../shipyard/routes-notes.ts';
import { workflowRoutes } from '../shipyard/routes-workflows.ts';
import { planRoutes } from '../plans/routes-plans.ts';
import { configdocsRoutes } from '../deckhand/routes-configdocs.ts';
import { nodeLabelsRoutes } from '../promenade/routes-node-labels.ts';
import { revisionRoutes } from '../deckhand/routes-revisions.ts';
import { taskRoutes } from '../drydock/routes-tasks.ts';
import { StatusBody } from './response-schemas.ts';
import { ApiError, failureBody, httpStatusOf, statusBody, toApiError } from './status.ts';

/** Default request body limit: 4 MiB, room for the YAML of a large site. */
export const DEFAULT_BODY_LIMIT = 4 * 1024 * 1024;

/** Version of the API document. */
export const API_VERSION = '1.0.0';

/** Options of {@link createApiServer}. */
export interface ApiServerOptions extends ApiDeps {
  /** The accepted tokens; none means every request but `/health` is refused. */
  tokens: readonly ApiToken[];
  /** Keystone's verifier (src/api/http/keystone.ts), asked for a token none of `tokens` matches. */
  keystone?: TokenVerifier;
  /** Largest request body in bytes ({@link DEFAULT_BODY_LIMIT}). */
  bodyLimit?: number;
  /** Fastify's logger option (pino); off by default. */
  logger?: FastifyServerOptions['logger'];
}

/** What each route carries in its Fastify config. */
type RouteConfig = { access: Access; media: BodyMedia };

const METHODS = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'] as const;

function send(reply: FastifyReply, answer: RouteReply): FastifyReply {
  reply.code(answer.code).headers(answer.headers ?? {});
  if (answer.yaml !== undefined) return reply.type('application/x-yaml; charset=utf-8').send(answer.yaml);
  if (answer.text !== undefined) return reply.type(answer.text.type).send(answer.text.body);
  if (answer.body === undefined) return reply.send();
  return reply.type('application/json; charset=utf-8').send(answer.body);
}

function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  const body = failureBody(error);
  return reply.code(body.code).headers(error.headers).type('application/json; charset=utf-8').send(body);
}

/** Answers malformed HTTP (that never became a request) with a Status body, then closes. */
function clientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const body = failureBody(
    new ApiError(tooLarge ? FailureType.HeaderTooLarge : FailureType.InvalidRequest, tooLarge ? 'request headers too large' : 'malformed HTTP request', [
      err.code ?? 'malformed HTTP request',
    ]),
  );
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${body.code} ${STATUS_CODES[body.code] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
}

/** Refuses a body the route does not take, before anything reads it. */
async function checkMedia(request: FastifyRequest): Promise<void> {
  const { media } = request.routeOptions.config as unknown as RouteConfig;
  const length = request.headers['content-length'];
  const hasBody = (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
  if (!hasBody) return;
  if (media === 'none') throw new ApiError(FailureType.InvalidRequest, `${request.method} ${request.routeOptions.url} takes no body`);
  const type = (request.headers['content-type'] ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? '';
  const accepted: readonly string[] = MEDIA_TYPES[media];
  if (!accepted.includes(type)) {
    throw new ApiError(
      FailureType.UnsupportedMediaType,
      `this request takes ${accepted.join(' or ')}, not ${type === '' ? 'a body without Content-Type' : type}`,
    );
  }
}

/** The health routes (no token needed): liveness, and readiness with each dependency reported on its own. */
function healthRoutes(deps: ApiDeps): RouteDef[] {
  const liveness = ['/health', '/api/v1.0/health'].map((path) =>
    defineRoute({
      method: 'GET',
      path,
      operationId: path === '/health' ? 'health' : 'healthV1',
      summary: 'Liveness: 200 while the server answers (no token needed)',
      tag: 'health',
      access: 'public',
      responses: { 200: { description: 'up', schema: StatusBody } },
      async handle() {
        return { code: 200, body: statusBody({ status: 'Success', code: 200, reason: 'OK', message: 'relabel API is up' }) };
      },
    }),
  );
  const readiness = ['/health/ready', '/api/v1.0/health/ready'].map((path) =>
    defineRoute({
      method: 'GET',
      path,
      operationId: path === '/health/ready' ? 'healthReady' : 'healthReadyV1',
      summary: 'Readiness: 200 when Temporal and the revision store both answer, else 503 (no token needed)',
      description: 'details.messageList has one entry per dependency (temporal, revision store), error true for each that did not answer within 3 s.',
      tag: 'health',
      access: 'public',
      responses: { 200: { description: 'ready', schema: StatusBody }, 503: { description: 'a dependency does not answer', schema: StatusBody } },
      async handle() {
        const { temporal, store } = await deps.relabel.health();
        const checks = [temporal, store];
        const failed = checks.filter((c) => !c.ok);
        const ready = failed.length === 0;
        const body: StatusBody = {
          ...statusBody({
            status: ready ? 'Success' : 'Failure',
            code: ready ? 200 : 503,
            reason: ready ? 'OK' : FailureType.Unavailable,
            message: ready ? 'relabel API is ready' : `relabel API is not ready: ${failed.map((c) => c.message.split(':', 1)[0]).join(' and ')} not answering`,
            retry: !ready,
          }),
          details: { errorCount: failed.length, messageList: checks.map((c) => ({ message: c.message, error: !c.ok })) },
        };
        return { code: body.code, body };
      },
    }),
  );
  return [...liveness, ...readiness];
}

/**
 * Registers `routes` on `app`, each with its access and media checks, and
 * on every path they name a 405 for the other methods, naming the allowed
 * ones (answered after authentication).
 */
function registerRoutes(app: FastifyInstance, routes: readonly RouteDef[]): void {
  for (const route of routes) {
    const config: RouteConfig = { access: route.access, media: route.media };
    app.route({
      method: route.method,
      url: route.path,
      config,
      preParsing: async (request, _reply, payload) => {
        await checkMedia(request);
        return payload;
      },
      handler: async (request, reply) => send(reply, await route.run(request)),
    });
  }

  // Every other method on a known path is a 405 naming the allowed ones (after auth).
  const byPath = new Map<string, RouteDef[]>();
  for (const route of routes) byPath.set(route.path, [...(byPath.get(route.path) ?? []), route]);
  for (const [path, defs] of byPath) {
    const allowed = new Set<string>(defs.map((d) => d.method));
    if (allowed.has('GET')) allowed.add('HEAD');
    const others = METHODS.filter((m) => !allowed.has(m));
    const config: RouteConfig = { access: defs.some((d) => d.access === 'public') ? 'public' : 'read', media: 'none' };
    app.route({
      method: others,
      url: path,
      config,
      onRequest: async (request) => {
        const allow = [...allowed].join(', ');
        throw new ApiError(FailureType.MethodNotAllowed, `${request.method} is not allowed on ${path} (allowed: ${allow})`, undefined, { allow });
      },
      handler: async () => {
        throw new ApiError(FailureType.MethodNotAllowed, 'method not allowed');
      },
    });
  }
}

/**
 * Builds the API server over the facade (not listening yet: call
 * `listen`). `close()` stops it; closing the facade is the caller's.
 */
export function createApiServer(options: ApiServerOptions): FastifyInstance {
  const authenticate = createRequestAuthenticator(options.tokens, options.keystone);
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // While closing, requests already on open connections are still served (then the connection
    // closes) instead of Fastify's own 503 body, which is not a Status.
    return503OnClosing: false,
    // Action, task and plan ids name a workflow and run; a dry run's (a plan's) is longer than Fastify's default 100.
    routerOptions: { maxParamLength: 1024 },
    clientErrorHandler: clientError,
    frameworkErrors: (error, _request, reply) => {
      void sendError(reply, toApiError(error));
    },
  });

  // JSON (Fastify's parser) and YAML as text; anything else is a 415.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser([...MEDIA_TYPES.yaml], { parseAs: 'string' }, (_request, body, done) => done(null, body));

  app.addHook('onRequest', async (request) => {
    const access = (request.routeOptions.config as unknown as Partial<RouteConfig>).access ?? 'read';
    if (access === 'public') return;
    const caller = await authenticate(request.headers);
    if (caller === null) {
      throw new ApiError(FailureType.Unauthorized, 'a valid token is required: X-Auth-Token or Authorization: Bearer', undefined, {
        'www-authenticate': 'Bearer',
      });
    }
    if (access === 'write' && caller.role !== 'admin') {
      throw new ApiError(
        FailureType.Forbidden,
        `a ${caller.role} token may only read: ${request.method} ${request.routeOptions.url ?? request.url} needs an admin token`,
      );
    }
    rememberCaller(request, caller);
  });

  app.setErrorHandler((err, request, reply) => {
    const error = toApiError(err);
    if (httpStatusOf(error.type).code >= 500) request.log.error({ err }, 'request failed');
    return sendError(reply, error);
  });

  app.setNotFoundHandler(async (request) => {
    const path = request.url.split('?', 1)[0] ?? '';
    throw new ApiError(FailureType.NotFound, `no route ${request.method} ${path.length > 200 ? `${path.slice(0, 200)}…` : path}`);
  });

  const deps: ApiDeps = { relabel: options.relabel, nodes: options.nodes, ...(options.planWaitMs !== undefined ? { planWaitMs: options.planWaitMs } : {}) };
  const routes = [
    ...healthRoutes(deps),
    apiMetrics(app),
    ...configdocsRoutes(deps),
    ...revisionRoutes(deps),
    ...actionRoutes(deps),
    ...actionStepRoutes(deps),
    ...noteRoutes(deps),
    ...workflowRoutes(deps),
    ...planRoutes(deps),
    ...taskRoutes(deps),
    ...nodeLabelsRoutes(deps),
  ];
  let document: Record<string, unknown> | undefined;
  routes.push(
    defineRoute({
      method: 'GET',
      path: '/api/v1.0/openapi.json',
      operationId: 'openapi',
      summary: 'This OpenAPI document',
      tag: 'health',
      access: 'read',
      responses: { 200: { description: 'OpenAPI 3.1' } },
      async handle() {
        document ??= openApiDocument(routes, API_VERSION);
        return { code: 200, body: document };
      },
    }),
  );

  registerRoutes(app, routes);
  return app;
}

/**
 * Keystone tokens for the HTTP API: what Airship's clients (Shipyard CLI,
 * Drydock CLI) send as `X-Auth-Token`. relabel validates a token with
 * `GET /v3/auth/tokens` (`X-Subject-Token` the caller's token, `X-Auth-Token`
 * relabel's own service token, which it gets with password auth and gets
 * again when it nears expiry or Keystone answers 401), maps the token's
 * Keystone roles to relabel's roles, and keeps the answer for a bounded time
 * in a bounded cache. A revoked token is therefore still accepted until its
 * cache entry ends (at most the cache time, 60 s by default).
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { FailureType } from '../../core/plan/failure-types.ts';
import { Role, type Caller } from './auth.ts';
import { ApiError } from './status.ts';
import { TokenCache } from './token-cache.ts';

/** Airship's role mapping: `admin` and `admin_ucp` may do everything, `reader` and `admin_ucp_viewer` may read. */
export const DEFAULT_KEYSTONE_ROLES = 'admin=admin,admin_ucp=admin,reader=viewer,admin_ucp_viewer=viewer';

/** Keystone role name → relabel role. */
export type KeystoneRoleMap = ReadonlyMap<string, Role>;

/** The role mapping from `keystoneRole=relabelRole,…` (relabel roles: admin, viewer). Throws naming the bad entry. */
export function parseKeystoneRoles(text: string, where = '--keystone-roles'): KeystoneRoleMap {
  const roles = new Map<string, Role>();
  for (const entry of text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '')) {
    const match = /^([^=\s]{1,255})=(admin|viewer)$/.exec(entry);
    if (!match?.[1] || !match[2]) throw new Error(`${where}: ${JSON.stringify(entry.slice(0, 100))} is not keystoneRole=admin or keystoneRole=viewer`);
    if (roles.has(match[1])) throw new Error(`${where}: the Keystone role ${match[1]} is mapped more than once`);
    roles.set(match[1], match[2] as Role);
  }
  if (roles.size === 0) throw new Error(`${where}: no roles mapped; expected e.g. ${DEFAULT_KEYSTONE_ROLES}`);
  return roles;
}

/** How relabel reaches Keystone and whom it authenticates as. */
export interface KeystoneOptions {
  /** Keystone's identity endpoint, with or without the trailing `/v3`. */
  url: string;
  /** relabel's service user: it needs the `service` role (or `admin`) to validate other users' tokens. */
  username: string;
  password: string;
  /** The service user's project (Airship's: `service`). */
  projectName: string;
  userDomainName: string;
  projectDomainName: string;
  roles: KeystoneRoleMap;
  /** Longest time a validated token is trusted without asking Keystone again (default 60; 0 asks every time). */
  cacheSeconds?: number;
  /** Most tokens kept in the cache (default 10,000). */
  cacheEntries?: number;
  /** Longest wait for one Keystone answer (default 5,000 ms). */
  timeoutMs?: number;
  /** Clock, ms since the epoch (tests). */
  now?: () => number;
}

/**
 * Resolves a presented token to its caller: null when Keystone does not
 * know it (invalid, expired or revoked: a 401); throws an ApiError
 * Forbidden when the token carries no mapped role, Unavailable (503) when
 * Keystone does not answer, answers 5xx, or refuses relabel's own
 * credentials.
 */
export type KeystoneVerifier = (token: string) => Promise<Caller | null>;

/** What one validated token says: who, with which Keystone roles (names). */
type Validated = { user: string; roles: string[] };

const KeystoneToken = z.object({
  token: z.object({
    expires_at: z.string(),
    user: z.object({ name: z.string() }),
    roles: z.array(z.object({ name: z.string() })).optional(),
  }),
});

/** Keystone's base URL (no trailing `/` nor `/v3`). Throws on anything but http(s). */
export function keystoneBase(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`--keystone-url ${JSON.stringify(url.slice(0, 200))}: not a URL; expected e.g. http://keystone.example:5000/v3`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`--keystone-url ${url}: expected an http or https URL`);
  return parsed.href.replace(/\/+$/, '').replace(/\/v3$/, '');
}

/** The relabel role of a token's Keystone roles: admin over viewer; undefined when none is mapped. */
export function mappedRole(roles: readonly string[], map: KeystoneRoleMap): Role | undefined {
  const mapped = roles.map((r) => map.get(r));
  if (mapped.includes(Role.admin)) return Role.admin;
  if (mapped.includes(Role.viewer)) return Role.viewer;
  return undefined;
}

const clip = (names: readonly string[], max = 20) => {
  const shown = names.slice(0, max).map((n) => (n.length > 64 ? `${n.slice(0, 64)}…` : n));
  return `${shown.join(', ')}${names.length > max ? ` and ${names.length - max} more` : ''}`;
};

/** The 403 for a token without a mapped role, naming the roles that would do. */
function noRoleError(validated: Validated, map: KeystoneRoleMap): ApiError {
  const wanted = (role: Role) => clip([...map].filter(([, r]) => r === role).map(([k]) => k));
  const has = validated.roles.length === 0 ? 'no roles (an unscoped token?)' : `roles ${clip(validated.roles)}, none mapped to a relabel role`;
  return new ApiError(
    FailureType.Forbidden,
    `Keystone user ${clip([validated.user])} has ${has}: to read it needs one of ${wanted(Role.viewer) || '(none)'}; to change, one of ${wanted(Role.admin) || '(none)'}`,
  );
}

const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/**
 * How the verifier reaches Keystone at `base` (named `shown` in messages):
 * one request bounded to `timeoutMs`; no answer, a network error or a 5xx is
 * Unavailable, any other answer is the caller's to read.
 */
function keystoneRequests(
  base: string,
  shown: string,
  timeoutMs: number,
): { send(path: string, init: RequestInit): Promise<Response>; unavailable(what: string): ApiError } {
  const unavailable = (what: string) => new ApiError(FailureType.Unavailable, `Keystone at ${shown} did not answer: ${what}`);

  async function send(path: string, init: RequestInit): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const why = (err as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (cause?.code ?? cause?.message ?? (err as Error).message);
      throw unavailable(`${init.method ?? 'GET'} ${path}: ${why}`);
    }
    if (response.status >= 500) {
      await response.body?.cancel();
      throw unavailable(`${init.method ?? 'GET'} ${path}: HTTP ${response.status}`);
    }
    return response;
  }
  return { send, unavailable };
}

/** The Unavailable error for Keystone refusing (HTTP `status`) to validate a token for relabel's service user. */
function validationRefused(status: number, options: KeystoneOptions, shown: string): ApiError {
  const why =
    status === 403 ? `: it needs the service or admin role in project ${options.projectName}` : status === 401 ? ', even with a service token just issued' : '';
  return new ApiError(
    FailureType.Unavailable,
    `Keystone at ${shown} refused to validate a token for relabel's service user ${options.username} (HTTP ${status})${why}`,
  );
}

/** Creates the verifier; nothing is sent to Keystone until the first token. */
export function createKeystoneVerifier(options: KeystoneOptions): KeystoneVerifier {
  const base = keystoneBase(options.url);
  // Messages name Keystone by the URL the operator gave.
  const shown = options.url.replace(/\/+$/, '');
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? 5000;
  const cacheMs = (options.cacheSeconds ?? 60) * 1000;
  const cache = new TokenCache<Validated>({ maxEntries: options.cacheEntries ?? 10_000, now });
  const inFlight = new Map<string, Promise<Validated | null>>();
  let service: { token: string; renewAt: number } | undefined;
  let serviceAuth: Promise<string> | undefined;

  const { send, unavailable } = keystoneRequests(base, shown, timeoutMs);

  async function authenticateService(): Promise<string> {
    const response = await send('/v3/auth/tokens?nocatalog', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: {
            methods: ['password'],
            password: { user: { name: options.username, domain: { name: options.userDomainName }, password: options.password } },
          },
          scope: { project: { name: options.projectName, domain: { name: options.projectDomainName } } },
        },
      }),
    });
    const token = response.headers.get('x-subject-token');
    const body = KeystoneToken.safeParse(await response.json().catch(() => undefined));
    if (response.status !== 201 || !token || !body.success) {
      throw new ApiError(
        FailureType.Unavailable,
        `Keystone at ${shown} refused relabel's service credentials (user ${options.username} in project ${options.projectName}): HTTP ${response.status}`,
      );
    }
    const expires = Date.parse(body.data.token.expires_at);
    // Renewed when a tenth of its life (at most a minute) is left, so a validation never carries an expiring token.
    const issued = now();
    service = { token, renewAt: expires - Math.min(60_000, (expires - issued) / 10) };
    return token;
  }

  function serviceToken(): Promise<string> {
    if (service && service.renewAt > now()) return Promise.resolve(service.token);
    serviceAuth ??= authenticateService().finally(() => (serviceAuth = undefined));
    return serviceAuth;
  }

  async function validate(token: string): Promise<Validated | null> {
    for (let attempt = 1; ; attempt++) {
      const serviceTokenText = await serviceToken();
      const response = await send('/v3/auth/tokens?nocatalog', { method: 'GET', headers: { 'x-auth-token': serviceTokenText, 'x-subject-token': token } });
      if (response.status === 401 && attempt === 1) {
        // relabel's own token expired or was revoked: get a new one, once.
        await response.body?.cancel();
        if (service?.token === serviceTokenText) service = undefined;
        continue;
      }
      if (response.status === 404 || response.status === 400) {
        await response.body?.cancel();
        return null;
      }
      if (response.status !== 200) {
        await response.body?.cancel();
        throw validationRefused(response.status, options, shown);
      }
      const body = KeystoneToken.safeParse(await response.json().catch(() => undefined));
      if (!body.success) throw unavailable('GET /v3/auth/tokens: an answer that is not a token');
      const validated = { user: body.data.token.user.name, roles: (body.data.token.roles ?? []).map((r) => r.name) };
      const until = Math.min(now() + cacheMs, Date.parse(body.data.token.expires_at));
      cache.set(digest(token), validated, until);
      return Date.parse(body.data.token.expires_at) > now() ? validated : null;
    }
  }

  return async (token) => {
    const key = digest(token);
    let validated = cache.get(key);
    if (validated === undefined) {
      // Requests presenting the same token at once share one validation.
      let pending = inFlight.get(key);
      if (pending === undefined) {
        pending = validate(token).finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      const answer = await pending;
      if (answer === null) return null;
      validated = answer;
    }
    const role = mappedRole(validated.roles, options.roles);
    if (role === undefined) throw noRoleError(validated, options.roles);
    return { role, name: validated.user };
  };
}

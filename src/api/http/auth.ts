/**
 * Static API tokens, each with a role (`admin` may do everything, `viewer`
 * only reads) and a name (who holds it: the audit trail records it as who
 * started a run). Tokens come from a file (YAML or JSON list of
 * `{token, role, name?}`) or from `RELABEL_API_TOKENS`
 * (`token:role[:name],…`), and are presented as `X-Auth-Token` (what
 * Airship clients send) or `Authorization: Bearer`. A token without a name
 * is called `token-N`, N its place in the list (from 1). With Keystone on
 * (src/api/http/keystone.ts), a token no static token matches is asked of
 * Keystone, and the caller's name is the Keystone user name.
 */
import { createHash } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

/** Roles of API tokens. */
export const Role = { admin: 'admin', viewer: 'viewer' } as const;
/** One of the {@link Role} strings. */
export type Role = (typeof Role)[keyof typeof Role];

/** A token's name: letters, digits and `.`, `_`, `@`, `-`, starting with a letter or digit, at most 64 characters. */
export const TOKEN_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

/** One configured token. Tokens are opaque text without whitespace, at least 8 characters. */
export const ApiToken = z
  .object({
    token: z
      .string()
      .min(8, { error: 'tokens must be at least 8 characters' })
      .regex(/^[\x21-\x7e]+$/, { error: 'tokens are printable ASCII without spaces' }),
    role: z.enum([Role.admin, Role.viewer]),
    name: z
      .string()
      .regex(TOKEN_NAME_PATTERN, { error: 'a token name is letters, digits and . _ @ -, starting with a letter or digit, at most 64 characters' })
      .optional(),
  })
  .strict();
/** One configured token. */
export type ApiToken = z.infer<typeof ApiToken>;

/** The configured tokens: at least one, no token twice. */
export const ApiTokens = z
  .array(ApiToken)
  .min(1, { error: 'no API tokens configured' })
  .refine((tokens) => new Set(tokens.map((t) => t.token)).size === tokens.length, { error: 'a token is listed more than once' })
  .refine((tokens) => new Set(tokens.map(tokenName)).size === tokens.length, { error: 'a token name is given more than once' });

/** The name of the token at `index` (from 0) of the list: its own, else `token-N` (N = index + 1). */
export function tokenName(token: Pick<ApiToken, 'name'>, index: number): string {
  return token.name ?? `token-${index + 1}`;
}

function checked(value: unknown, where: string): ApiToken[] {
  const result = ApiTokens.safeParse(value);
  if (result.success) return result.data;
  // Messages name the entry, never the token text.
  const problems = result.error.issues.map((i) => `${i.path.length ? `#${i.path.map(String).join('.')}` : 'list'}: ${i.message}`);
  throw new Error(`invalid API tokens in ${where}: ${problems.join('; ')}`);
}

/** Tokens from a tokens file's text (a YAML or JSON list of `{token, role}`). Throws naming each problem. */
export function parseTokensFile(text: string, where = 'the tokens file'): ApiToken[] {
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (err) {
    throw new Error(`${where} is not YAML or JSON: ${(err as Error).message}`);
  }
  return checked(value, where);
}

const ROLES: ReadonlySet<string> = new Set(Object.values(Role));

/** One `token:role[:name]` entry: the role follows the last colon, or the one before it when a name follows. */
function envEntry(entry: string): { token: string; role?: string; name?: string } {
  const colon = entry.lastIndexOf(':');
  if (colon < 0) return { token: entry };
  const last = entry.slice(colon + 1);
  const before = entry.lastIndexOf(':', colon - 1);
  // `token:admin:ops-alice`: a role, then a name. A last part that is a role is always the role.
  if (!ROLES.has(last) && before >= 0 && ROLES.has(entry.slice(before + 1, colon))) {
    return { token: entry.slice(0, before), role: entry.slice(before + 1, colon), name: last };
  }
  return { token: entry.slice(0, colon), role: last };
}

/**
 * Tokens from `token:role[:name],…`: the role follows the token's last
 * colon, and may be followed by `:name`. Throws naming each problem.
 */
export function parseTokensEnv(value: string, where = 'RELABEL_API_TOKENS'): ApiToken[] {
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map(envEntry);
  return checked(entries, where);
}

const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/** Who a request's token says the caller is: the token's role and name. */
export interface Caller {
  role: Role;
  name: string;
}

/**
 * Finds the role and name of the token a request presents, or null (no
 * token, an unknown token, a malformed header). Tokens are compared by
 * SHA-256 digest, so lookup time does not depend on how much of a guess
 * matches a token.
 */
export function createAuthenticator(tokens: readonly ApiToken[]): (headers: Readonly<Record<string, string | string[] | undefined>>) => Caller | null {
  const callers = new Map(tokens.map((t, i): [string, Caller] => [digest(t.token), { role: t.role, name: tokenName(t, i) }]));
  return (headers) => {
    const presented = presentedToken(headers);
    return presented === null ? null : (callers.get(digest(presented)) ?? null);
  };
}

/** Resolves a token no static token matched (Keystone's verifier): its caller, null when unknown; may reject with an ApiError. */
export type TokenVerifier = (token: string) => Promise<Caller | null>;

/**
 * Finds who makes a request: the static tokens first, then, when given,
 * `verify` (Keystone) for a token none of them matches. Resolves null for
 * no token, a malformed header, or a token nobody knows; rejects as
 * `verify` does (a token without a mapped role, Keystone unreachable).
 */
export function createRequestAuthenticator(
  tokens: readonly ApiToken[],
  verify?: TokenVerifier,
): (headers: Readonly<Record<string, string | string[] | undefined>>) => Promise<Caller | null> {
  const fromStatic = createAuthenticator(tokens);
  return async (headers) => {
    const caller = fromStatic(headers);
    if (caller !== null || verify === undefined) return caller;
    const presented = presentedToken(headers);
    return presented === null ? null : verify(presented);
  };
}

/** The token in `X-Auth-Token` or `Authorization: Bearer …`; null when absent, repeated or malformed. */
function presentedToken(headers: Readonly<Record<string, string | string[] | undefined>>): string | null {
  const header = headers['x-auth-token'];
  if (typeof header === 'string') return header.trim() === '' ? null : header.trim();
  if (header !== undefined) return null;
  const authorization = headers['authorization'];
  if (typeof authorization !== 'string') return null;
  const match = /^Bearer +(\S+) *$/i.exec(authorization);
  return match?.[1] ?? null;
}

const callers = new WeakMap<object, Caller>();

/** Remembers who made `request` (the server's auth hook calls it once the token is known). */
export function rememberCaller(request: object, caller: Caller): void {
  callers.set(request, caller);
}

/** The name of the token `request` was made with; `unknown` for a request that presented none (a public route). */
export function callerName(request: object): string {
  return callers.get(request)?.name ?? 'unknown';
}

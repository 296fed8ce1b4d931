/**
 * Static API tokens, each with a role: `admin` may do everything, `viewer`
 * only reads. Tokens come from a file (YAML or JSON list of `{token, role}`)
 * or from `RELABEL_API_TOKENS` (`token:role,token:role`), and are presented
 * as `X-Auth-Token` (what Airship clients send) or `Authorization: Bearer`.
 */
import { createHash } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

/** Roles of API tokens. */
export const Role = { admin: 'admin', viewer: 'viewer' } as const;
/** One of the {@link Role} strings. */
export type Role = (typeof Role)[keyof typeof Role];

/** One configured token. Tokens are opaque text without whitespace, at least 8 characters. */
export const ApiToken = z
  .object({
    token: z.string().min(8, { error: 'tokens must be at least 8 characters' }).regex(/^[\x21-\x7e]+$/, { error: 'tokens are printable ASCII without spaces' }),
    role: z.enum([Role.admin, Role.viewer]),
  })
  .strict();
/** One configured token. */
export type ApiToken = z.infer<typeof ApiToken>;

/** The configured tokens: at least one, no token twice. */
export const ApiTokens = z
  .array(ApiToken)
  .min(1, { error: 'no API tokens configured' })
  .refine((tokens) => new Set(tokens.map((t) => t.token)).size === tokens.length, { error: 'a token is listed more than once' });

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

/** Tokens from `token:role,token:role` (the role follows the last colon). Throws naming each problem. */
export function parseTokensEnv(value: string, where = 'RELABEL_API_TOKENS'): ApiToken[] {
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      const colon = entry.lastIndexOf(':');
      return colon < 0 ? { token: entry } : { token: entry.slice(0, colon), role: entry.slice(colon + 1) };
    });
  return checked(entries, where);
}

const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/**
 * Finds the role of the token a request presents, or null (no token, an
 * unknown token, a malformed header). Tokens are compared by SHA-256 digest,
 * so lookup time does not depend on how much of a guess matches a token.
 */
export function createAuthenticator(tokens: readonly ApiToken[]): (headers: Readonly<Record<string, string | string[] | undefined>>) => Role | null {
  const roles = new Map(tokens.map((t) => [digest(t.token), t.role]));
  return (headers) => {
    const presented = presentedToken(headers);
    return presented === null ? null : (roles.get(digest(presented)) ?? null);
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

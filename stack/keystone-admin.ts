/**
 * Keystone's identity API as the tests and the local Airship setup use it:
 * issue and revoke tokens, create projects, users and roles, and register
 * services with endpoints in the catalog. Each call speaks HTTP to a real
 * Keystone; a refusal throws naming the call and Keystone's answer.
 */

/** Whom to authenticate as: a user (Default domain) with a password, scoped to a project (Default domain), or unscoped. */
export interface KeystoneCredentials {
  username: string;
  password: string;
  /** The project the token is scoped to; absent: an unscoped token (no roles). */
  project?: string;
}

/** An issued token and when it expires (ms since the epoch). */
export interface IssuedToken {
  token: string;
  expiresAt: number;
}

/** The service types Airship's clients look up in the catalog: Shipyard's and Drydock's. */
export const AIRSHIP_SERVICES = [
  { type: 'shipyard', name: 'shipyard' },
  { type: 'physicalprovisioner', name: 'drydock' },
] as const;

/** A client of one Keystone's identity API (`url` ends in `/v3`), acting as `admin`. */
export class KeystoneAdmin {
  readonly url: string;
  readonly #admin: KeystoneCredentials;
  #adminToken: IssuedToken | undefined;

  constructor(url: string, admin: KeystoneCredentials) {
    this.url = url.replace(/\/+$/, '');
    this.#admin = admin;
  }

  /** Password auth as `credentials`; throws when Keystone refuses. */
  async issueToken(credentials: KeystoneCredentials): Promise<IssuedToken> {
    const scope = credentials.project === undefined ? {} : { scope: { project: { name: credentials.project, domain: { id: 'default' } } } };
    const body = {
      auth: {
        identity: { methods: ['password'], password: { user: { name: credentials.username, domain: { id: 'default' }, password: credentials.password } } },
        ...scope,
      },
    };
    const response = await fetch(`${this.url}/auth/tokens?nocatalog`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const answer = (await response.json()) as { token?: { expires_at?: string } };
    const token = response.headers.get('x-subject-token');
    if (response.status !== 201 || !token || !answer.token?.expires_at) {
      throw new Error(`Keystone refused a token for ${credentials.username}: HTTP ${response.status} ${JSON.stringify(answer).slice(0, 300)}`);
    }
    return { token, expiresAt: Date.parse(answer.token.expires_at) };
  }

  /** Revokes `token` at once (DELETE /v3/auth/tokens). */
  async revokeToken(token: string): Promise<void> {
    await this.#call('DELETE', '/auth/tokens', undefined, { 'x-subject-token': token });
  }

  /** The id of the project `name`, created when missing. Idempotent. */
  async ensureProject(name: string): Promise<string> {
    return this.#ensure('projects', 'project', name, { name, domain_id: 'default' });
  }

  /** The id of the role `name`, created when missing. Idempotent. */
  async ensureRole(name: string): Promise<string> {
    return this.#ensure('roles', 'role', name, { name });
  }

  /**
   * Creates (or updates the password of) user `name` in the Default domain,
   * with `roles` on `project` (each role created when missing). Idempotent.
   */
  async ensureUser(options: { name: string; password: string; project: string; roles: readonly string[] }): Promise<string> {
    const projectId = await this.ensureProject(options.project);
    const found = await this.#find('users', options.name);
    const userId =
      found ??
      (await this.#call<{ user: { id: string } }>('POST', '/users', { user: { name: options.name, password: options.password, domain_id: 'default' } })).user
        .id;
    if (found !== undefined) await this.#call('PATCH', `/users/${found}`, { user: { password: options.password } });
    for (const role of options.roles) {
      const roleId = await this.ensureRole(role);
      await this.#call('PUT', `/projects/${projectId}/users/${userId}/roles/${roleId}`);
    }
    return userId;
  }

  /**
   * Registers service `name` of `type` with public, internal and admin
   * endpoints at `url` in RegionOne, replacing endpoints it had. Idempotent.
   */
  async registerService(type: string, name: string, url: string): Promise<void> {
    const services = await this.#call<{ services: { id: string }[] }>('GET', `/services?type=${encodeURIComponent(type)}`);
    const serviceId =
      services.services[0]?.id ?? (await this.#call<{ service: { id: string } }>('POST', '/services', { service: { type, name, enabled: true } })).service.id;
    const endpoints = await this.#call<{ endpoints: { id: string }[] }>('GET', `/endpoints?service_id=${serviceId}`);
    for (const endpoint of endpoints.endpoints) await this.#call('DELETE', `/endpoints/${endpoint.id}`);
    for (const iface of ['public', 'internal', 'admin']) {
      await this.#call('POST', '/endpoints', { endpoint: { service_id: serviceId, interface: iface, url, region_id: 'RegionOne', enabled: true } });
    }
  }

  async #token(): Promise<string> {
    if (this.#adminToken === undefined || this.#adminToken.expiresAt - 5_000 < Date.now()) this.#adminToken = await this.issueToken(this.#admin);
    return this.#adminToken.token;
  }

  async #find(collection: string, name: string): Promise<string | undefined> {
    const listed = await this.#call<Record<string, { id: string; name: string }[]>>('GET', `/${collection}?name=${encodeURIComponent(name)}`);
    return listed[collection]?.find((item) => item.name === name)?.id;
  }

  async #ensure(collection: string, key: string, name: string, body: Record<string, unknown>): Promise<string> {
    const found = await this.#find(collection, name);
    if (found !== undefined) return found;
    const created = await this.#call<Record<string, { id: string }>>('POST', `/${collection}`, { [key]: body });
    const id = created[key]?.id;
    if (id === undefined) throw new Error(`Keystone created a ${key} ${name} without an id`);
    return id;
  }

  async #call<T = unknown>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    const response = await fetch(`${this.url}${path}`, {
      method,
      headers: { 'x-auth-token': await this.#token(), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`Keystone ${method} ${path}: HTTP ${response.status} ${text.slice(0, 300)}`);
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }
}

/**
 * A real Keystone (OpenStack Identity) for tests and for driving Airship's
 * clients locally: the pinned `keystone` from PyPI in the tool cache's venv
 * (`npm run tools`), SQLite and fernet keys in a temporary directory,
 * serving on a loopback port the OS picks. No root, no containers.
 *
 *   node stack/keystone.ts up --relabel-url http://127.0.0.1:9000
 *
 * starts one, registers relabel as Shipyard and Drydock in its catalog,
 * prints the OS_* and RELABEL_KEYSTONE_* variables, and runs until
 * interrupted.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AIRSHIP_SERVICES, KeystoneAdmin } from './keystone-admin.ts';
import { startProcess, stopProcess, waitUntil, type ManagedProcess } from './processes.ts';
import { MissingToolError, toolsDir } from './tools.ts';

const SERVE = fileURLToPath(new URL('./keystone-serve.py', import.meta.url));

/** A running Keystone. */
export interface Keystone {
  /** The identity endpoint, `http://127.0.0.1:PORT/v3` (what OS_AUTH_URL names). */
  url: string;
  /** The bootstrap admin's password (user `admin`, project `admin`, Default domain). */
  adminPassword: string;
  /** The identity API as that admin. */
  admin: KeystoneAdmin;
  /** How long setup and start took, in ms. */
  startMs: number;
  /** The server's log (stdout and stderr). */
  log: string;
  /** Stops the server and removes its directory. Idempotent. */
  stop(): Promise<void>;
}

/** The Python of the Keystone venv that `tools/build-tools.sh` installs; throws saying how to install it when missing. */
export function keystonePython(env: NodeJS.ProcessEnv = process.env): string {
  const python = join(toolsDir(env), 'keystone-venv', 'bin', 'python');
  if (!existsSync(python)) {
    throw new MissingToolError(
      `Keystone is not installed: expected its venv at ${python}. Run \`npm run tools\` (tools/build-tools.sh) to install it from PyPI.`,
    );
  }
  return python;
}

/** keystone.conf: SQLite in `dir`, fernet tokens living `expiration` seconds, keys in `dir`. */
function keystoneConf(dir: string, expiration: number): string {
  return [
    '[DEFAULT]',
    'use_stderr = true',
    '[database]',
    `connection = sqlite:///${join(dir, 'keystone.db')}`,
    '[token]',
    'provider = fernet',
    `expiration = ${expiration}`,
    '[fernet_tokens]',
    `key_repository = ${join(dir, 'fernet-keys')}`,
    '[fernet_receipts]',
    `key_repository = ${join(dir, 'fernet-keys')}`,
    '[credential]',
    `key_repository = ${join(dir, 'credential-keys')}`,
    '',
  ].join('\n');
}

/**
 * Starts a Keystone: db_sync, fernet_setup, credential_setup and bootstrap
 * (user `admin` with role `admin` on project `admin`, region RegionOne,
 * the identity endpoint), then serves. Tokens live
 * `tokenExpirationSeconds` (default 3600). Resolves once it issues tokens;
 * throws with its log's tail when it does not within `timeoutMs`.
 */
export async function startKeystone(options: { tokenExpirationSeconds?: number; timeoutMs?: number } = {}): Promise<Keystone> {
  const started = Date.now();
  const python = keystonePython();
  const dir = mkdtempSync(join(tmpdir(), 'relabel-keystone-'));
  const conf = join(dir, 'keystone.conf');
  const portFile = join(dir, 'port');
  writeFileSync(conf, keystoneConf(dir, options.tokenExpirationSeconds ?? 3600));
  const adminPassword = randomBytes(12).toString('hex');
  let server: ManagedProcess | undefined;
  const stop = async () => {
    if (server) await stopProcess(server, 5_000);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    server = await startProcess('keystone', python, [SERVE, conf, portFile], join(dir, 'keystone.log'), {
      ...process.env,
      OS_BOOTSTRAP_PASSWORD: adminPassword,
      PYTHONWARNINGS: 'ignore',
    });
    await waitUntil(server, 'writing its port', async () => existsSync(portFile), options.timeoutMs ?? 120_000);
    const url = `http://127.0.0.1:${readFileSync(portFile, 'utf8').trim()}/v3`;
    const admin = new KeystoneAdmin(url, { username: 'admin', password: adminPassword, project: 'admin' });
    await admin.issueToken({ username: 'admin', password: adminPassword, project: 'admin' });
    return { url, adminPassword, admin, startMs: Date.now() - started, log: server.log, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** What {@link registerAirship} set up: relabel's service user, to give `relabel api` as RELABEL_KEYSTONE_*. */
export interface AirshipRegistration {
  serviceUser: { username: string; password: string; project: string };
  /** The URL registered for each Airship service type. */
  endpoint: string;
}

/**
 * Registers relabel in `keystone`'s catalog as Airship's Shipyard
 * (`shipyard`) and Drydock (`physicalprovisioner`), at
 * `<relabelUrl>/api/v1.0` (public, internal and admin), and creates
 * relabel's service user (`relabel`, role `service` on project `service`).
 * Idempotent.
 */
export async function registerAirship(keystone: Pick<Keystone, 'admin'>, relabelUrl: string): Promise<AirshipRegistration> {
  const endpoint = `${relabelUrl.replace(/\/+$/, '')}/api/v1.0`;
  for (const service of AIRSHIP_SERVICES) await keystone.admin.registerService(service.type, service.name, endpoint);
  const serviceUser = { username: 'relabel', password: randomBytes(12).toString('hex'), project: 'service' };
  await keystone.admin.ensureUser({ name: serviceUser.username, password: serviceUser.password, project: serviceUser.project, roles: ['service'] });
  // Airship's own roles, so operators can be given them.
  for (const role of ['admin_ucp', 'admin_ucp_viewer']) await keystone.admin.ensureRole(role);
  return { serviceUser, endpoint };
}

/** The environment for Airship's clients (OS_*, as the admin) and for `relabel api` (RELABEL_KEYSTONE_*). */
export function keystoneEnv(keystone: Pick<Keystone, 'url' | 'adminPassword'>, registration: AirshipRegistration): Record<string, string> {
  return {
    OS_AUTH_URL: keystone.url,
    OS_IDENTITY_API_VERSION: '3',
    OS_USERNAME: 'admin',
    OS_PASSWORD: keystone.adminPassword,
    OS_PROJECT_NAME: 'admin',
    OS_USER_DOMAIN_NAME: 'Default',
    OS_PROJECT_DOMAIN_NAME: 'Default',
    OS_REGION_NAME: 'RegionOne',
    OS_INTERFACE: 'public',
    RELABEL_KEYSTONE_URL: keystone.url,
    RELABEL_KEYSTONE_USERNAME: registration.serviceUser.username,
    RELABEL_KEYSTONE_PASSWORD: registration.serviceUser.password,
    RELABEL_KEYSTONE_PROJECT: registration.serviceUser.project,
  };
}

async function cli(argv: string[]): Promise<void> {
  const [command, flag, relabelUrl] = argv;
  if (command !== 'up' || flag !== '--relabel-url' || !relabelUrl || !/^https?:\/\//.test(relabelUrl)) {
    throw new Error('usage: node stack/keystone.ts up --relabel-url http://HOST:PORT');
  }
  const keystone = await startKeystone();
  const registration = await registerAirship(keystone, relabelUrl);
  for (const [name, value] of Object.entries(keystoneEnv(keystone, registration))) console.log(`export ${name}=${value}`);
  console.error(`keystone: ready at ${keystone.url} in ${(keystone.startMs / 1000).toFixed(1)} s (log ${keystone.log}); Ctrl-C stops it`);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void keystone.stop().then(() => process.exit(0));
    });
  }
  // Runs until a signal stops it.
  setInterval(() => {}, 1 << 30);
}

if (import.meta.main) {
  cli(process.argv.slice(2)).catch((err: unknown) => {
    console.error(`keystone: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}

/**
 * Every setting of relabel's worker, API server and CLI: flag, environment
 * variable, parser, default and help, in one table. Each entry point builds
 * its commander options and reads its environment from these rows
 * (src/settings/setting.ts), so a flag is declared once and a value is
 * parsed the same way from the command line and from the environment.
 * Defaults that belong to a module (the Kubernetes rate, the metrics port,
 * the body limit) are given by the entry point that uses that module.
 * Variables with no flag are rows of {@link VARIABLES}. No code outside
 * src/settings/ reads a variable by name (a lint rule in eslint.config.js),
 * except src/temporal/settings.ts, which reads the rows marked
 * `envReadElsewhere` together with Temporal's profile.
 */
import { DEFAULT_FLEET_TASK_QUEUE, DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE } from '../core/plan/constants.ts';
import { anyValue, bytes, listenAddress, logLevel, onUnlessOff, port, rate, slots, taskQueueName, text, WORKER_ROLES, workerRole } from './parsers.ts';
import type { Setting, Variable } from './setting.ts';

/** Where relabel reaches Temporal and its store: the worker, the API server and the CLI share these. */
export const CONNECTION = {
  address: {
    flags: '--address <host:port>',
    help: 'Temporal frontend',
    env: 'TEMPORAL_ADDRESS',
    envNote: "default localhost:7233, or the Temporal profile's",
    envReadElsewhere: true,
    parse: text,
  },
  namespace: {
    flags: '--namespace <name>',
    help: 'Temporal namespace',
    env: 'TEMPORAL_NAMESPACE',
    envNote: `default ${DEFAULT_NAMESPACE}, or the Temporal profile's`,
    envReadElsewhere: true,
    parse: text,
  },
  taskQueue: {
    flags: '--task-queue <name>',
    help: 'task queue of the relabel workers',
    env: 'RELABEL_TASK_QUEUE',
    envNote: `default ${DEFAULT_TASK_QUEUE}`,
    envReadElsewhere: true,
    parse: text,
  },
  fleetTaskQueue: {
    flags: '--fleet-task-queue <name>',
    help: "task queue of the fleet's workflows (rollouts, plans, status), polled by the centre worker (relabel-worker --role centre)",
    env: 'RELABEL_FLEET_TASK_QUEUE',
    envNote: `default ${DEFAULT_FLEET_TASK_QUEUE}`,
    parse: taskQueueName,
    default: DEFAULT_FLEET_TASK_QUEUE,
  },
  store: {
    flags: '--store <url>',
    help: 'revision store URL, sqlite:PATH or postgres://…',
    env: 'RELABEL_STORE_URL',
    envNote: 'default: sqlite in $RELABEL_DATA_DIR or ~/.local/share/relabel',
    parse: text,
  },
  kubeconfig: {
    flags: '--kubeconfig <path>',
    help: 'kubeconfig of the cluster whose nodes relabel labels',
    env: 'KUBECONFIG',
    envNote: 'in-cluster, else ~/.kube/config, when absent',
    parse: text,
  },
  logLevel: {
    flags: '--log-level <level>',
    help: 'trace, debug, info, warn or error',
    env: 'RELABEL_LOG_LEVEL',
    parse: logLevel,
    default: 'info',
  },
} satisfies Record<string, Setting<unknown>>;

/** The worker's own settings (src/worker/config.ts gives the module defaults). */
export const WORKER = {
  role: {
    flags: '--role <role>',
    help: "site: a site's worker, with its cluster's kubeconfig, its store and its task queue; centre: the fleet's workflows only, on the fleet task queue, with no kubeconfig, store or activities",
    env: 'RELABEL_WORKER_ROLE',
    parse: workerRole,
    default: WORKER_ROLES[0],
  },
  kubeQps: { flags: '--kube-qps <n>', help: 'Kubernetes API requests per second, 0 for no limit', env: 'RELABEL_KUBE_QPS', parse: rate },
  kubeBurst: { flags: '--kube-burst <n>', help: 'requests allowed at once above the rate', env: 'RELABEL_KUBE_BURST', parse: rate },
  nodeCacheMax: {
    flags: '--node-cache-max <n>',
    help: 'most Nodes the worker keeps a watched copy of, to plan from without listing them all; 0: no copy, every plan LISTs',
    env: 'RELABEL_NODE_CACHE_MAX',
    parse: rate,
  },
  maxCachedWorkflows: { flags: '--max-cached-workflows <n>', help: 'workflow executions kept in memory', parse: rate },
  maxWorkflowTasks: {
    flags: '--max-workflow-tasks <n>',
    help: "workflow tasks run at once: at least the largest window of nodes in flight (a run's concurrency) that this worker serves",
    parse: slots,
  },
  metricsAddress: {
    flags: '--metrics-address <ip>',
    help: 'address of /metrics, /health/live and /health/ready: 127.0.0.1 loopback only, 0.0.0.0 every interface',
    env: 'RELABEL_METRICS_ADDRESS',
    parse: listenAddress,
  },
  metricsPort: {
    flags: '--metrics-port <port>',
    help: 'their port, 0 for any free one',
    env: 'RELABEL_METRICS_PORT',
    parse: port,
  },
} satisfies Record<string, Setting<unknown>>;

/** The API server's own settings (src/api/main.ts gives the module defaults). */
export const API = {
  listen: { flags: '--listen <host:port>', help: 'address to listen on, e.g. 127.0.0.1:8000', parse: text },
  tokensFile: {
    flags: '--tokens-file <file>',
    help: 'YAML or JSON list of {token, role, name?} (else RELABEL_API_TOKENS=token:role[:name],…): role admin or viewer, each token at least 8 printable ASCII characters without spaces; the name is recorded as who started a run',
    parse: text,
  },
  keystoneUrl: {
    flags: '--keystone-url <url>',
    help: 'validate other tokens with Keystone at this identity URL, e.g. http://keystone:5000/v3',
    env: 'RELABEL_KEYSTONE_URL',
    parse: text,
  },
  keystoneUsername: {
    flags: '--keystone-username <name>',
    help: "relabel's service user in Keystone",
    env: 'RELABEL_KEYSTONE_USERNAME',
    parse: text,
    default: 'relabel',
  },
  keystonePasswordFile: {
    flags: '--keystone-password-file <file>',
    help: "file holding the service user's password",
    env: 'RELABEL_KEYSTONE_PASSWORD_FILE',
    envNote: 'else RELABEL_KEYSTONE_PASSWORD',
    parse: text,
  },
  keystoneProject: { flags: '--keystone-project <name>', help: "the service user's project", env: 'RELABEL_KEYSTONE_PROJECT', parse: text, default: 'service' },
  keystoneUserDomain: {
    flags: '--keystone-user-domain <name>',
    help: "the service user's domain",
    env: 'RELABEL_KEYSTONE_USER_DOMAIN',
    parse: text,
    default: 'Default',
  },
  keystoneProjectDomain: {
    flags: '--keystone-project-domain <name>',
    help: "the service project's domain",
    env: 'RELABEL_KEYSTONE_PROJECT_DOMAIN',
    parse: text,
    default: 'Default',
  },
  keystoneRoles: {
    flags: '--keystone-roles <map>',
    help: 'Keystone role → relabel role, keystoneRole=admin|viewer,…',
    env: 'RELABEL_KEYSTONE_ROLES',
    parse: text,
  },
  keystoneCacheSeconds: {
    flags: '--keystone-cache-seconds <s>',
    help: 'longest time a validated Keystone token is trusted without asking again',
    env: 'RELABEL_KEYSTONE_CACHE_SECONDS',
    parse: text,
    default: '60',
  },
  bodyLimit: { flags: '--body-limit <bytes>', help: 'largest request body', parse: bytes },
} satisfies Record<string, Setting<unknown>>;

/** Default Temporal Web UI of links to runs: the local development server's. */
const DEFAULT_UI_URL = 'http://localhost:8233';

/**
 * Settings with no flag, read from their variable only: links, switches,
 * secrets kept off the command line, and the variables of the OS relabel
 * depends on.
 */
export const VARIABLES = {
  uiUrl: { env: 'TEMPORAL_UI_URL', help: 'Temporal Web UI, for links', envNote: `default ${DEFAULT_UI_URL}`, parse: text, default: DEFAULT_UI_URL },
  searchAttributes: {
    env: 'RELABEL_SEARCH_ATTRIBUTES',
    help: "off: start runs without relabel's search attributes, for a Temporal server that has not registered them",
    envNote: 'default on',
    parse: onUnlessOff,
    default: true,
  },
  dataDir: {
    env: 'RELABEL_DATA_DIR',
    help: 'directory of the embedded store',
    envNote: 'default $XDG_DATA_HOME/relabel, else ~/.local/share/relabel',
    parse: text,
  },
  xdgDataHome: { env: 'XDG_DATA_HOME', help: 'base of the default data directory, when absolute', parse: text },
  debug: { env: 'RELABEL_DEBUG', help: 'print the stack of an unexpected error', envNote: 'any value', parse: anyValue, default: false },
  apiTokens: {
    env: 'RELABEL_API_TOKENS',
    help: 'API tokens when there is no --tokens-file: token:role[:name],…, role admin or viewer, each token at least 8 characters',
    parse: text,
  },
  keystonePassword: {
    env: 'RELABEL_KEYSTONE_PASSWORD',
    help: "relabel's service password in Keystone",
    envNote: 'when there is no --keystone-password-file',
    parse: text,
  },
  user: { env: 'USER', help: 'who runs a command, for the audit trail, when the OS has no name for the uid', envNote: 'else LOGNAME', parse: text },
  logname: { env: 'LOGNAME', help: 'who runs a command, when USER is unset', parse: text },
  path: {
    env: 'PATH',
    help: 'where executable label plugins find programs: the only variable they get',
    envNote: 'default /usr/local/bin:/usr/bin:/bin',
    parse: text,
    default: '/usr/local/bin:/usr/bin:/bin',
  },
} satisfies Record<string, Variable<unknown>>;

/**
 * The proxy variables gRPC, and so the Temporal client, honours, each in
 * both spellings. relabel never uses their values: it only asks whether one
 * is set, to say why Temporal could not be reached (src/temporal/reach.ts).
 */
export const PROXY_VARIABLES: readonly Variable<string>[] = ['grpc_proxy', 'https_proxy', 'http_proxy'].flatMap((name) =>
  [name, name.toUpperCase()].map((env) => ({ env, help: 'a proxy the Temporal client connects through', parse: text })),
);

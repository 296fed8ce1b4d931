/**
 * Why Temporal cannot be reached, in plain words, for the worker, the CLI
 * and the API alike: `cannot reach Temporal at 127.0.0.1:7999 (namespace
 * default): connection refused`. The gRPC clients report a transport error
 * (the worker's) or only a deadline (the client's); a plain TCP connection
 * to the address says what is wrong with it.
 */
import { connect } from 'node:net';
import { clip } from '../core/plan/text.ts';
import { variableFromEnv } from '../settings/setting.ts';
import { PROXY_VARIABLES } from '../settings/table.ts';

/** How long the TCP probe waits for an answer. */
export const PROBE_TIMEOUT_MS = 2000;

/** Longest part of a client's own error message kept. */
const MAX_CAUSE = 200;

/** Host and port of a `host:port` (`[::1]:7233` for IPv6) address; undefined when it is not one. */
export function hostPort(address: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:/\s[\]]+)):(\d{1,5})$/.exec(address.trim());
  const port = Number(match?.[3]);
  const host = match?.[1] ?? match?.[2];
  return host !== undefined && port >= 1 && port <= 65535 ? { host, port } : undefined;
}

/** A socket error code in plain words (`timeoutMs`: how long the probe waited). */
export function socketReason(code: string | undefined, host: string, timeoutMs = PROBE_TIMEOUT_MS): string | undefined {
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_NONAME':
      return `host ${host} not found`;
    case 'EAI_AGAIN':
      return `host ${host} could not be looked up (DNS not answering)`;
    case 'ETIMEDOUT':
      return `no answer within ${timeoutMs / 1000} s`;
    case 'EHOSTUNREACH':
      return `host ${host} unreachable`;
    case 'ENETUNREACH':
      return 'network unreachable';
    case 'ECONNRESET':
      return 'connection reset';
    default:
      return undefined;
  }
}

/**
 * The gist of a Temporal client's connection error, bounded: the OS or
 * resolver message inside the worker's transport error (`message:
 * "Connection refused"`, `error: "failed to lookup address information…"`),
 * or the first line of the message.
 */
export function transportCause(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const os = /(?:message|error): "([^"]+)"/.exec(text)?.[1];
  const line = (os ?? text.split('\n', 1)[0] ?? '').trim();
  return clip(line, MAX_CAUSE);
}

/** Resolves with the socket error code of a TCP connection to host:port, `ETIMEDOUT` after the timeout, or undefined when it connects. */
function probe(host: string, port: number, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (code: string | undefined) => {
      socket.destroy();
      resolve(code);
    };
    socket.setTimeout(timeoutMs, () => done('ETIMEDOUT'));
    socket.once('connect', () => done(undefined));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? 'ERROR'));
  });
}

/** Probe outcomes no retry of a client can change: nothing listens, or the host does not exist or cannot be routed to. */
const DEFINITIVE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_NONAME', 'EHOSTUNREACH', 'ENETUNREACH']);

/** Whether `env` sends gRPC through a proxy, which a direct probe would not see. */
function proxied(env: NodeJS.ProcessEnv): boolean {
  return PROXY_VARIABLES.some((variable) => variableFromEnv(variable, env) !== undefined);
}

/** `cannot reach Temporal at ADDRESS (namespace NS)`. */
function where(address: string, namespace: string): string {
  return `cannot reach Temporal at ${address} (namespace ${namespace})`;
}

/**
 * The message for a failed connection to Temporal at `address`:
 * `cannot reach Temporal at ADDRESS (namespace NS): REASON`, where the
 * reason comes from a TCP connection to the address (refused, host not
 * found, no answer, unreachable), or, when that connects (or gRPC goes
 * through a proxy of the environment), from the client's own error (such as
 * a TLS or protocol mismatch).
 */
export async function temporalUnreachable(
  address: string,
  namespace: string,
  err: unknown,
  options: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  const timeoutMs = options.timeoutMs ?? PROBE_TIMEOUT_MS;
  const at = where(address, namespace);
  const target = hostPort(address);
  if (!target) return `${at}: the address is not host:port (${transportCause(err)})`;
  if (proxied(options.env ?? process.env)) return `${at} through the proxy of the environment: ${transportCause(err)}`;
  const code = await probe(target.host, target.port, timeoutMs);
  if (code === undefined) return `${at}: the port accepts connections, but the gRPC connection failed: ${transportCause(err)}`;
  return `${at}: ${socketReason(code, target.host, timeoutMs) ?? `${code} (${transportCause(err)})`}`;
}

/**
 * Before a client connects to Temporal at `address`: the
 * {@link temporalUnreachable} message when a TCP connection to it shows
 * that no client can (refused, no such host, unreachable), so a command
 * fails at once instead of waiting out the client's connect timeout;
 * undefined otherwise (it connects, does not answer within the probe's
 * timeout, goes through a proxy, or the address is not host:port), leaving
 * the verdict to the client.
 */
export async function refusedAtOnce(
  address: string,
  namespace: string,
  options: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<string | undefined> {
  const timeoutMs = options.timeoutMs ?? PROBE_TIMEOUT_MS;
  const target = hostPort(address);
  if (!target || proxied(options.env ?? process.env)) return undefined;
  const code = await probe(target.host, target.port, timeoutMs);
  if (code === undefined || !DEFINITIVE.has(code)) return undefined;
  return `${where(address, namespace)}: ${socketReason(code, target.host, timeoutMs) ?? code}`;
}

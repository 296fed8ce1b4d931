/**
 * Parsers of setting values, shared by a setting's flag and its environment
 * variable. Each returns the value or throws commander's InvalidArgumentError
 * with the rule the value broke (commander and {@link settingFromEnv} put
 * the flag, the variable and the value around it).
 */
import { isIP } from 'node:net';
import { InvalidArgumentError } from 'commander';

/** A parser of whole numbers from `min` to `max`, refusing anything else with `rule`. */
export function wholeNumber(min: number, max: number, rule: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(rule);
    return n;
  };
}

/** A whole number ≥ 0 (rates, bursts, cache sizes). */
export const rate = wholeNumber(0, Infinity, 'must be a whole number ≥ 0');

/** Workflow task slots: a whole number ≥ 2 (the SDK needs two with sticky execution). */
export const slots = wholeNumber(2, Infinity, 'must be a whole number ≥ 2');

/** A TCP port: 0 (any free port) to 65535. */
export const port = wholeNumber(0, 65535, 'must be a port number, 0 to 65535');

/** A size in bytes, at least one. */
export const bytes = wholeNumber(1, Number.MAX_SAFE_INTEGER, 'must be a positive number of bytes');

/** An IP address of this host to listen on. */
export function listenAddress(value: string): string {
  if (isIP(value) === 0) throw new InvalidArgumentError('must be an IP address of this host: 127.0.0.1 (loopback only) or 0.0.0.0 (every interface)');
  return value;
}

/** Any text, as given (names, paths, URLs checked where they are used). */
export function text(value: string): string {
  return value;
}

/** Longest task queue name a setting accepts (Temporal's own limit is higher; a name this long is a mistake). */
const MAX_QUEUE_NAME = 200;

/** A task queue name: printable, no spaces, at most {@link MAX_QUEUE_NAME} characters. */
export function taskQueueName(value: string): string {
  if (value === '' || value.length > MAX_QUEUE_NAME || !/^[\x21-\x7e]+$/.test(value)) {
    throw new InvalidArgumentError(`must be a task queue name: 1 to ${MAX_QUEUE_NAME} printable ASCII characters, no spaces`);
  }
  return value;
}

/** What a worker process is: a site's worker (the site's cluster, store and queue) or the fleet's centre (the fleet's workflows only). */
export const WORKER_ROLES = ['site', 'centre'] as const;

/** One of {@link WORKER_ROLES}. */
export type WorkerRole = (typeof WORKER_ROLES)[number];

/** A worker role named by `--role` or `RELABEL_WORKER_ROLE`; throws naming the accepted ones. */
export function workerRole(value: string): WorkerRole {
  const known = WORKER_ROLES.find((r) => r === value.trim().toLowerCase());
  if (known === undefined) throw new InvalidArgumentError(`worker role ${JSON.stringify(value.slice(0, 40))}: expected ${WORKER_ROLES.join(' or ')}`);
  return known;
}

/** A switch that stays on unless its value is `off`. */
export function onUnlessOff(value: string): boolean {
  return value !== 'off';
}

/** A switch that any value turns on. */
export function anyValue(): boolean {
  return true;
}

/** Levels an operator can filter logs at, most verbose first. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;

/** One of {@link LOG_LEVELS}. */
export type LogLevelName = (typeof LOG_LEVELS)[number];

/** A log level named by a flag or `RELABEL_LOG_LEVEL`, in any case; throws naming the accepted ones. */
export function logLevel(value: string): LogLevelName {
  const level = value.trim().toLowerCase();
  const known = LOG_LEVELS.find((l) => l === level);
  if (known === undefined) throw new InvalidArgumentError(`log level ${JSON.stringify(value.slice(0, 40))}: expected one of ${LOG_LEVELS.join(', ')}`);
  return known;
}

/**
 * The API server's own CPU profile of a timed pass (`--apiserver-profile
 * DIR`): its pprof endpoint (on by default in kube-apiserver) sampled over
 * the pass's first seconds, written to DIR/<pass>.pprof, to read with
 * `go tool pprof -top DIR/<pass>.pprof` (where the API server's CPU per
 * changed node goes: patch, field manager, watch fan-out, heartbeats).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiserverGetBytes } from '../stack/kube-metrics.ts';
import type { StackInfo } from '../stack/stack.ts';
import { opts } from './bench-options.ts';

/** Seconds sampled from a pass's start (passes of 1,000 nodes or more last longer). */
const PROFILE_SECONDS = 30;

/**
 * With `--apiserver-profile`, starts sampling the API server for pass
 * `pass`; the promise settles once the profile is written (await it after
 * the pass). Without the option, settles at once. A failed profile is
 * reported on stderr, never failing the pass.
 */
export function apiserverProfile(stack: StackInfo, pass: string): Promise<void> {
  const dir = opts['apiserver-profile'];
  if (dir === undefined) return Promise.resolve();
  mkdirSync(dir, { recursive: true });
  return apiserverGetBytes(stack.adminKubeconfig, `/debug/pprof/profile?seconds=${PROFILE_SECONDS}`).then(
    (profile) => writeFileSync(join(dir, `${pass}.pprof`), profile),
    (err: unknown) => console.error(`bench: the API server's profile of ${pass}: ${err instanceof Error ? err.message : String(err)}`),
  );
}

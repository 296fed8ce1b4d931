/**
 * The release half of the facade: `relabel release --nodes …` as a
 * numbered update run started with `release` (see `core/plan/release.ts`):
 * its plan refuses the whole run, writing nothing, when a target is not in
 * the cluster, carries no applied-run record of the site, or is still held
 * by the latest design; otherwise one guarded patch per node takes back
 * exactly what relabel's records say it owns, and the records.
 */
import { FailureType } from '../core/plan/failure-types.ts';
import { RELEASE_ACTION } from '../core/plan/release.ts';
import { runAudit, StartedVia } from '../core/plan/run-audit.ts';
import { normalizeTargets } from '../core/plan/targets.ts';
import { RelabelError } from './relabel-error.ts';
import type { Runs, StartedRun } from './runs/runs.ts';

/** What a release is asked. */
export interface ReleaseOptions {
  /** Node names: a list, or a comma-separated string. */
  nodes: unknown;
  /** Who releases them (kept with the run, via `release`). */
  by: string;
  /** Go ahead even when the release removes more of the site's owned labels than the policy's max_removal_fraction. */
  allowMassRemoval?: boolean;
}

/**
 * Starts a release run over `options.nodes` at the latest committed
 * revision. Throws a {@link RelabelError} (InvalidTargets) for a list that
 * is empty or holds a name that is not a node name or a duplicate, and what
 * a start throws (RunInProgress while a run of the site goes); nothing is
 * started then.
 */
export async function startRelease(runs: Pick<Runs, 'start'>, options: ReleaseOptions): Promise<StartedRun> {
  const parsed = normalizeTargets(options.nodes);
  if (!parsed.ok) throw new RelabelError(FailureType.InvalidTargets, parsed.message);
  return runs.start({
    targets: parsed.targets,
    release: true,
    action: RELEASE_ACTION,
    audit: runAudit(options.by, StartedVia.release),
    ...(options.allowMassRemoval ? { allowMassRemoval: true } : {}),
  });
}

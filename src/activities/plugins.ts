/**
 * Polling a site's label plugins: run every plugin the latest revision
 * declares, check each output whole, and store the good ones as a new
 * plugin set (a failed plugin's last good labels carried over), with every
 * plugin's status. The labels go to the store, never through Temporal: the
 * result holds the set's id and counts only, and one line per plugin.
 */
import { createHash } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../core/plan/failure-types.ts';
import type { PluginSpec } from '../core/site/label-plugin.ts';
import { checkPluginOutput, type PluginLabels } from '../core/site/plugin-output.ts';
import { clip } from '../core/plan/text.ts';
import { mapLimited } from '../core/plan/map-limited.ts';
import { MAX_TARGETS } from '../core/plan/targets.ts';
import { runnableRevision } from '../store/revisions/revision-checks.ts';
import type { DesignCache } from '../store/designs/design-cache.ts';
import type { CarriedPluginPart, FreshPluginPart } from '../store/plugins/plugin-store.ts';
import type { Store } from '../store/store.ts';
import { runWorkflowId } from '../contracts/messages.ts';
import { PollStatus, type PluginPollOutcome, type PollResult } from '../contracts/plugin-messages.ts';
import { documentValidationFailure } from './document-failure.ts';
import { readPlugin, type PluginRead } from './plugin-runner.ts';

/** Longest error message kept per plugin (status, result, logs). */
export const MAX_PLUGIN_ERROR = 2000;

/** Plugins read at once. */
const POLL_CONCURRENCY = 4;

/** What polling needs. */
export interface PollDeps {
  store: Store;
  designs: DesignCache;
  read?: (plugin: PluginSpec) => Promise<PluginRead>;
  warn?: (message: string, fields: Record<string, unknown>) => void;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Digest of a plugin's labels, independent of the order the plugin printed them in. */
export function labelsDigest(labels: PluginLabels): string {
  const hash = createHash('sha256');
  for (const node of Object.keys(labels).sort()) hash.update(`${JSON.stringify(node)}:${JSON.stringify(labels[node])}\n`);
  return hash.digest('hex');
}

/**
 * Polls the plugins of `site` as the latest committed revision declares
 * them. Rejects (non-retryable) when there is no committed revision
 * (NoCommittedRevision), its documents are invalid (DocumentValidationFailed)
 * or it is another site's (InvalidArgument). A plugin's failure is not the
 * poll's: it is reported, stored in its status, and its last good labels
 * stay.
 */
export async function pollSite(deps: PollDeps, input: { site: string }): Promise<PollResult> {
  const { store } = deps;
  const latest = await store.revisions.latest();
  if (!latest) throw ApplicationFailure.nonRetryable('no revision has been committed yet; nothing declares plugins', FailureType.NoCommittedRevision);
  const design = await deps.designs.get(latest.id);
  if (!design.ok) throw documentValidationFailure(latest.id, design.errors, 'plugins are not polled until a valid revision is committed');
  const site = design.design.site;
  if (site !== input.site)
    throw ApplicationFailure.nonRetryable(`the latest revision (${latest.id}) is of site ${site}, not ${input.site}`, FailureType.InvalidArgument);
  const specs = design.design.plugins ?? [];
  const protectedKeys = design.design.policy.protectedKeys;
  const polledAt = new Date();
  const read = deps.read ?? readPlugin;
  const checked = await mapLimited(specs, POLL_CONCURRENCY, async (spec) => {
    const got = await read(spec);
    const output = got.ok ? checkPluginOutput(got.text, spec, protectedKeys) : ({ ok: false, error: got.error } as const);
    return { spec, output };
  });

  const previous = await store.plugins.latestSet(site);
  const before = new Set(previous?.plugins.map((p) => p.plugin) ?? []);
  const parts: (FreshPluginPart | CarriedPluginPart)[] = [];
  const digests: string[] = [];
  const outcomes: PluginPollOutcome[] = [];
  for (const { spec, output } of checked) {
    if (output.ok) {
      const digest = labelsDigest(output.labels);
      parts.push({ plugin: spec.name, digest, polledAt, labels: output.labels });
      digests.push(`${spec.name}:${digest}`);
      outcomes.push({ plugin: spec.name, ok: true, nodes: output.nodes, labels: output.labelCount });
      continue;
    }
    const error = clip(output.error, MAX_PLUGIN_ERROR);
    const kept = previous !== null && before.has(spec.name);
    if (kept) {
      parts.push({ plugin: spec.name, carryFrom: previous.id });
      digests.push(`${spec.name}:${previous.plugins.find((p) => p.plugin === spec.name)?.digest ?? ''}`);
    }
    outcomes.push({ plugin: spec.name, ok: false, error, keptLastGood: kept });
    deps.warn?.('label plugin failed; its last good labels stay', { site, plugin: spec.name, error, keptLastGood: kept });
  }
  const digest = sha256(digests.join('\n'));
  let set = previous;
  let created = false;
  if (previous?.digest !== digest && (previous !== null || parts.length > 0)) {
    set = await store.plugins.saveSet({ site, digest, parts });
    created = true;
  }
  await store.plugins.setStatus(
    site,
    polledAt,
    outcomes.map((o) =>
      o.ok
        ? { plugin: o.plugin, ok: true, nodes: o.nodes ?? 0, labels: o.labels ?? 0, ...(set ? { set: set.id } : {}) }
        : { plugin: o.plugin, ok: false, error: o.error ?? 'failed' },
    ),
  );
  const failed = outcomes.filter((o) => !o.ok).length;
  const status = specs.length === 0 ? PollStatus.none : failed === 0 ? PollStatus.ok : failed === specs.length ? PollStatus.failed : PollStatus.partial;
  const count = (key: 'nodes' | 'labels') => set?.plugins.reduce((n, p) => n + p[key], 0) ?? 0;
  return {
    site,
    revision: latest.id,
    status,
    set: set ? { id: set.id, created, nodes: count('nodes'), labels: count('labels'), previous: created ? (previous?.id ?? null) : null } : null,
    plugins: outcomes,
    updateOnChange: design.design.policy.updateOnPluginChange === true,
  };
}

/** Every node's rows of a plugin set, as one comparable string per node, read a page at a time. */
async function nodeSignatures(store: Store, set: number): Promise<Map<string, string>> {
  const signatures = new Map<string, string>();
  if (set === 0) return signatures;
  for (let after: { node: string; plugin: string } | undefined; ;) {
    const page = await store.plugins.rows(set, { ...(after ? { after } : {}), limit: 5000 });
    for (const row of page) signatures.set(row.node, `${signatures.get(row.node) ?? ''}${row.plugin}=${JSON.stringify(row.labels)};`);
    const last = page.at(-1);
    if (page.length < 5000 || !last) return signatures;
    after = { node: last.node, plugin: last.plugin };
  }
}

/** An update run prepared for the nodes a new plugin set changes, or why there is none. */
export type PluginChangeRun = { run: number; revision: number; targets: number } | { skipped: string };

/**
 * Prepares an update run for the nodes of the design whose plugin labels
 * differ between set `previous` (0: none) and set `set`: the run is
 * recorded with those targets, the latest runnable revision and set `set`
 * pinned. Skipped (not an error) when no revision may run, none of the
 * design's nodes changed, or more than {@link MAX_TARGETS} did.
 */
export async function preparePluginChangeRun(
  deps: Pick<PollDeps, 'store' | 'designs'>,
  input: { site: string; set: number; previous: number },
): Promise<PluginChangeRun> {
  const { store } = deps;
  const checked = await runnableRevision(store, undefined);
  if (!checked.ok) return { skipped: checked.message };
  const design = await deps.designs.get(checked.revision);
  if (!design.ok) return { skipped: `revision ${checked.revision} has document errors` };
  const before = await nodeSignatures(store, input.previous);
  const after = await nodeSignatures(store, input.set);
  const changed = new Set<string>();
  for (const [node, signature] of after) if (before.get(node) !== signature) changed.add(node);
  for (const node of before.keys()) if (!after.has(node)) changed.add(node);
  const targets = [...changed].filter((node) => Object.hasOwn(design.design.nodes, node)).sort();
  if (targets.length === 0) return { skipped: 'no node of the design has plugin labels that changed' };
  if (targets.length > MAX_TARGETS)
    return { skipped: `${targets.length} nodes changed, more than a run takes (${MAX_TARGETS}); run update-labels by rack or filter` };
  const run = await store.runs.create({
    key: `plugins/${input.site}/${input.set}`,
    workflowId: runWorkflowId(input.site),
    revision: checked.revision,
    targets,
  });
  await store.plugins.pinRun(run.id, input.set);
  return { run: run.id, revision: checked.revision, targets: targets.length };
}

/**
 * `pollPlugins`: one poll of a site's label plugins, as a Temporal Schedule
 * (`relabel-plugins/<site>`) starts it every few minutes, or `relabel
 * plugins poll` now. One activity reads every plugin, checks each output
 * whole and stores the good ones as a plugin set; this workflow reports
 * what happened (result, details in the Temporal UI, warnings in the log).
 * When the site's policy asks for it and the new set changes some nodes'
 * plugin labels, it starts an update run for those nodes.
 */
import { ParentClosePolicy, log, proxyActivities, setCurrentDetails, startChild } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Activities } from '../activities/index.ts';
import { rejectionOf } from './failure.ts';
import { updateLabels } from './update-labels.ts';
import { runWorkflowId } from '../contracts/messages.ts';
import type { PollPluginsInput, PollPluginsResult, PollResult } from '../contracts/plugin-messages.ts';

const { pollSitePlugins } = proxyActivities<Activities>({
  // Up to four plugins at once, each bounded to at most 300 s by its document.
  startToCloseTimeout: '20m',
  retry: { maximumInterval: '30s', maximumAttempts: 3 },
  summary: 'run every label plugin of the site, check each output, store the good ones',
});
const { pluginChangeRun, discardPluginRun } = proxyActivities<Activities>({
  startToCloseTimeout: '5m',
  retry: { maximumInterval: '10s', maximumAttempts: 5 },
});

/** The poll as markdown for the Temporal UI: a headline, then one line per plugin. */
export function pollMarkdown(result: PollPluginsResult): string {
  const set = result.set
    ? `plugin set ${result.set.id}${result.set.created ? ' (new)' : ' (unchanged)'}: ${result.set.labels} label(s) in ${result.set.nodes} node entr(ies)`
    : 'no plugin set yet: runs apply document labels only';
  const lines = [`**${result.status}**: site ${result.site}, revision ${result.revision}; ${set}.`];
  for (const p of result.plugins) {
    lines.push(
      p.ok
        ? `- ${p.plugin}: ok, ${p.labels ?? 0} label(s) on ${p.nodes ?? 0} node(s)`
        : `- ${p.plugin}: **failed**${p.keptLastGood ? ' (last good labels kept)' : ''}: ${p.error ?? ''}`,
    );
  }
  const u = result.updateRun;
  if (u) lines.push('workflowId' in u ? `Update run ${u.run} (${u.workflowId}) started for ${u.targets} node(s).` : `No update run: ${u.skipped}.`);
  return lines.join('\n');
}

/**
 * Polls the plugins of `input.site` once. Fails (non-retryable) only when
 * the site cannot be polled at all: no committed revision, invalid
 * documents, another site's revision. A plugin's own failure is in the
 * result (`status` `partial` or `failed`), never a workflow failure: its
 * last good labels stay in use.
 */
export async function pollPlugins(input: PollPluginsInput): Promise<PollPluginsResult> {
  setCurrentDetails(`Polling the label plugins of site ${input.site}`);
  let polled: PollResult;
  try {
    polled = await pollSitePlugins({ site: input.site });
  } catch (err) {
    const rejection = rejectionOf(err);
    if (rejection) setCurrentDetails(`**failed**: ${rejection.type ?? 'Error'}: ${rejection.message}`);
    throw rejection ?? err;
  }
  const result: PollPluginsResult = { ...polled };
  for (const p of polled.plugins) {
    if (!p.ok) log.warn('label plugin failed', { site: polled.site, plugin: p.plugin, error: p.error, keptLastGood: p.keptLastGood });
  }
  if (polled.set?.created && polled.updateOnChange) {
    const prepared = await pluginChangeRun({ site: polled.site, set: polled.set.id, previous: polled.set.previous ?? 0 });
    if ('skipped' in prepared) {
      result.updateRun = prepared;
    } else {
      const workflowId = runWorkflowId(polled.site);
      try {
        await startChild(updateLabels, {
          workflowId,
          args: [{ run: prepared.run, revision: prepared.revision, searchAttributes: input.searchAttributes !== false }],
          memo: { run: prepared.run, action: 'plugins' },
          parentClosePolicy: ParentClosePolicy.ABANDON,
          staticSummary: `Update labels of ${prepared.targets} node(s) whose plugin labels changed (plugin set ${polled.set.id})`,
        });
        result.updateRun = { workflowId, run: prepared.run, targets: prepared.targets };
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
        await discardPluginRun({ run: prepared.run });
        result.updateRun = { skipped: `an update run is in progress for site ${polled.site}; the next run applies plugin set ${polled.set.id}` };
      }
    }
  }
  setCurrentDetails(pollMarkdown(result));
  return result;
}

/** The worker's workflowsPath: every workflow relabel runs. */
export { updateLabels } from './update-labels.ts';
export { relabelNode } from './relabel-node.ts';
export { detectDrift } from './detect-drift.ts';
export { pollPlugins } from './poll-plugins.ts';
export { watchJoins } from './watch-joins.ts';
export { fleetRollout } from './fleet-rollout.ts';
export { fleetSurvey } from './fleet-survey.ts';

/**
 * The recording of a fleet survey, for `scripts/record-histories.ts`
 * (`--only fleet-survey`): a fleet plan over the recording's site, whose
 * worker answers with its own dry run, and a site no worker serves, which
 * the survey reports unreachable.
 */
import type { Client } from '@temporalio/client';
import { fleetSurveyWorkflowId, type FleetSurveyInput } from '../src/contracts/fleet-survey.ts';
import type { fleetSurvey } from '../src/workflows/fleet-survey.ts';

/** The parts of a recording this one uses. */
export interface SurveyRecording {
  client: Client;
  taskQueue: string;
  save(name: string, workflowId: string, runId?: string): Promise<void>;
}

/** Records `fleet-survey-plan`. */
export async function recordFleetSurvey(rec: SurveyRecording): Promise<void> {
  const { client, taskQueue, save } = rec;
  const input: FleetSurveyInput = {
    kind: 'plan',
    sites: [
      { name: 'rec-site', taskQueue, labels: { type: 'edge' } },
      { name: 'gone', taskQueue: 'relabel-record-nobody', labels: {} },
    ],
    siteWaitSeconds: 2,
  };
  const workflowId = fleetSurveyWorkflowId('plan', 'record');
  const handle = await client.workflow.start<typeof fleetSurvey>('fleetSurvey', { taskQueue, workflowId, args: [input] });
  const result = await handle.result();
  if (result.answered !== 1 || result.unreachable !== 1) throw new Error(`the fleet survey ended ${JSON.stringify(result)}`);
  await save('fleet-survey-plan', workflowId, handle.firstExecutionRunId);
}

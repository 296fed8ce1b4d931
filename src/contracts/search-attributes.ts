/**
 * Typed keys of relabel's custom search attributes (registered on the local
 * dev server from SEARCH_ATTRIBUTES), so runs can be listed and filtered in
 * the Temporal UI by revision, site, node and status.
 */
import { RunStatus } from './messages.ts';
import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';

export const RelabelRevision = defineSearchAttributeKey('RelabelRevision', SearchAttributeType.INT);
export const RelabelStatus = defineSearchAttributeKey('RelabelStatus', SearchAttributeType.KEYWORD);
export const RelabelSite = defineSearchAttributeKey('RelabelSite', SearchAttributeType.KEYWORD);
export const RelabelNode = defineSearchAttributeKey('RelabelNode', SearchAttributeType.KEYWORD);

/** Temporal's own: the ID of the Schedule that started a workflow (absent for any other start). */
export const TemporalScheduledById = defineSearchAttributeKey('TemporalScheduledById', SearchAttributeType.KEYWORD);

/**
 * Values of RelabelStatus: `running` until an update run ends, then its
 * {@link RunStatus}; `dry_run` for a dry run throughout.
 */
export const RelabelStatusValue = { ...RunStatus, running: 'running', dryRun: 'dry_run' } as const;

/** Search attributes of one relabelNode run, set when it starts. */
export function nodeSearchAttributes(node: string, revision: number): SearchAttributePair[] {
  return [
    { key: RelabelNode, value: node },
    { key: RelabelRevision, value: revision },
  ];
}

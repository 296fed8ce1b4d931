/**
 * Typed keys of relabel's custom search attributes (registered on the local
 * dev server from SEARCH_ATTRIBUTES), so runs can be listed and filtered in
 * the Temporal UI by revision, site, node and status.
 */
import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';

export const RelabelRevision = defineSearchAttributeKey('RelabelRevision', SearchAttributeType.INT);
export const RelabelStatus = defineSearchAttributeKey('RelabelStatus', SearchAttributeType.KEYWORD);
export const RelabelSite = defineSearchAttributeKey('RelabelSite', SearchAttributeType.KEYWORD);
export const RelabelNode = defineSearchAttributeKey('RelabelNode', SearchAttributeType.KEYWORD);

/** Search attributes of one relabelNode run, set when it starts. */
export function nodeSearchAttributes(node: string, revision: number): SearchAttributePair[] {
  return [
    { key: RelabelNode, value: node },
    { key: RelabelRevision, value: revision },
  ];
}

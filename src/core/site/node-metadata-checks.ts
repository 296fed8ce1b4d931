/**
 * Checks of a node's resolved annotations, made once inheritance has given
 * each node its own: Kubernetes' limit on a node's total annotation size
 * (with relabel's ownership records counted) and Longhorn's node
 * configuration. Each finding names the node; findings at the same document
 * key are grouped across nodes (see `conflictErrors`).
 */
import { APPLIED_RECORD_MAX_BYTES } from '../plan/applied-run.ts';
import { APPLIED_ANNOTATION, OWNED_ANNOTATIONS_ANNOTATION, OWNED_LABELS_ANNOTATION, OWNED_TAINTS_ANNOTATION } from '../plan/constants.ts';
import type { Origin, ResolvedHost } from './design-resolve.ts';
import type { LabelConflict } from './desired-labels.ts';
import { utf8Length } from '../plan/label-syntax.ts';
import { longhornDefects } from './longhorn.ts';
import { quote } from '../plan/text.ts';

/** Kubernetes' limit on the total size of a node's annotations (keys and values, in bytes). */
export const ANNOTATIONS_MAX_BYTES = 256 * 1024;

/**
 * The bytes a node's annotations take as relabel writes them: the desired
 * annotations and relabel's records (ownership of labels, annotations and
 * taints, and the applied-run record at its longest, since any run may
 * write it), keys and values in UTF-8 bytes, as the API server counts them.
 */
export function annotationBytes(labels: readonly string[], annotations: Readonly<Record<string, string>>, taintIds: readonly string[]): number {
  let bytes = 0;
  for (const [key, value] of Object.entries(annotations)) bytes += utf8Length(key) + utf8Length(value);
  const record = (key: string, entries: readonly string[]) => (entries.length === 0 ? 0 : utf8Length(key) + utf8Length(entries.join(',')));
  bytes += record(OWNED_LABELS_ANNOTATION, labels);
  bytes += record(OWNED_ANNOTATIONS_ANNOTATION, Object.keys(annotations));
  bytes += record(OWNED_TAINTS_ANNOTATION, taintIds);
  return bytes + APPLIED_ANNOTATION.length + APPLIED_RECORD_MAX_BYTES;
}

/**
 * The findings on one resolved node whose desired labels are `labels`: its
 * annotations too large, and every Longhorn defect, each at the document
 * key that gives the offending annotation or label (the node's own
 * document when that is not known).
 */
export function nodeMetadataConflicts(host: ResolvedHost, labels: Readonly<Record<string, string>>, nodeOrigin: Origin): LabelConflict[] {
  const conflicts: LabelConflict[] = [];
  const annotations = Object.fromEntries([...host.annotations].map(([key, { value }]) => [key, value]));
  const bytes = annotationBytes(Object.keys(labels), annotations, [...host.taints.keys()]);
  if (bytes > ANNOTATIONS_MAX_BYTES) {
    conflicts.push({
      origin: nodeOrigin,
      node: host.name,
      head: `annotations take ${bytes} bytes with relabel's records; Kubernetes allows a node ${ANNOTATIONS_MAX_BYTES} (keys and values)`,
      tail: '',
    });
  }
  for (const { key, message } of longhornDefects(labels, annotations)) {
    const origin = host.annotations.get(key)?.origin ?? host.ownerData.get(key)?.origin ?? nodeOrigin;
    const kind = host.annotations.has(key) ? 'annotation' : 'label';
    conflicts.push({ origin, node: host.name, head: `${kind} ${quote(key)}: ${message}`, tail: '' });
  }
  return conflicts;
}

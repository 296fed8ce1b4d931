/**
 * Longhorn's tags (a node's, from `node.longhorn.io/default-node-tags`, and
 * a disk's, in `default-disks-config`), checked as longhorn-manager v1.12
 * reads them: Go's JSON reader into a `[]string`, then `util.ValidateTags`,
 * which discards the whole list when one tag is not a Kubernetes qualified
 * name. Longhorn drops a repeated tag and sorts the list; relabel refuses a
 * repeat instead (its own, stricter rule) and takes any order.
 */
import { labelKeyErrors } from '../plan/label-syntax.ts';
import { describeJson, type Json, readJson } from './longhorn-json.ts';
import { quote } from '../plan/text.ts';

/**
 * What is wrong with a list of tags (`where` names it in messages, e.g.
 * `tags` or `disks[0].tags`); empty when Longhorn would keep it. `null` is
 * no tags, as in Go; a `null` tag is the empty tag, as in Go.
 */
export function tagListErrors(tags: Json, where: string, reader: string): string[] {
  if (tags === null) return [];
  if (!Array.isArray(tags)) return [`${where} must be a JSON array of tags, not ${describeJson(tags)} (Longhorn: ${reader} reads it as a Go []string)`];
  const errors: string[] = [];
  const seen = new Set<string>();
  (tags as readonly Json[]).forEach((tag, i) => {
    if (tag !== null && typeof tag !== 'string') {
      errors.push(`${where}[${i}] must be a string, not ${describeJson(tag)} (Longhorn: ${reader} reads it as a Go []string)`);
      return;
    }
    const text = tag ?? '';
    const shown = tag === null ? 'null (Longhorn reads it as "")' : quote(text);
    const syntax = labelKeyErrors(text);
    if (syntax.length > 0) {
      errors.push(`${where}[${i}]: tag ${shown} is not a valid Longhorn tag: ${syntax.join('; ')} (Longhorn: util.ValidateTags, a Kubernetes qualified name)`);
    } else if (seen.has(text)) {
      errors.push(`${where}[${i}]: tag ${shown} is listed twice (relabel's rule, stricter than Longhorn, which drops the repeat: util.ValidateTags)`);
    }
    seen.add(text);
  });
  return errors;
}

/** What is wrong with a `node.longhorn.io/default-node-tags` value; empty when Longhorn would apply it. */
export function nodeTagsErrors(raw: string): string[] {
  const read = readJson(raw);
  if ('error' in read) return [`is not valid JSON (${read.error}); Longhorn discards it (GetNodeTagsFromAnnotation)`];
  return tagListErrors(read.value, 'tags', 'UnmarshalToNodeTags');
}

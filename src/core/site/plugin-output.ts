/**
 * A plugin's output, checked whole (the join of plugin labels with a node's
 * document labels is the plan side's: `withPluginLabels` in
 * `plan/node-wants.ts`). Output is JSON mapping node names to labels:
 * `{"node-1": {"feature.example.com/gpu": "true"}}`. Any defect refuses the
 * whole output (nothing of it is used); every defect is listed, up to
 * {@link MAX_OUTPUT_ERRORS}.
 */
import { isKubeletLabelKey, isProtectedLabelKey } from '../plan/label-keys.ts';
import { matchesNamespace, type PluginSpec } from './label-plugin.ts';
import { dns1123SubdomainErrors, labelKeyErrors, labelValueErrors } from '../plan/label-syntax.ts';
import { clip, quote } from '../plan/text.ts';

/** Most nodes one plugin's output may name. */
export const MAX_PLUGIN_NODES = 100_000;

/** Most labels one plugin may give one node. */
export const MAX_PLUGIN_LABELS_PER_NODE = 100;

/** Most defects an output's error lists; the count is of all. */
export const MAX_OUTPUT_ERRORS = 20;

/** A plugin's labels by node, as checked. */
export type PluginLabels = Record<string, Record<string, string>>;

/** Either the whole output, checked, or why it was refused (every defect up to the limit). */
export type PluginOutput =
  { ok: true; labels: PluginLabels; nodes: number; labelCount: number } | { ok: false; error: string; defects: string[]; defectCount: number };

/** Refuses an output with one defect. */
export function refused(error: string): Extract<PluginOutput, { ok: false }> {
  return { ok: false, error, defects: [], defectCount: 0 };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks a plugin's output text whole: valid JSON, an object of node names
 * (DNS subdomains) to objects of label keys to string values, at most
 * {@link MAX_PLUGIN_NODES} nodes and {@link MAX_PLUGIN_LABELS_PER_NODE}
 * labels a node, each key valid label syntax within one of the plugin's
 * namespaces, not kubelet-owned, not protected by the policy, each value
 * valid label-value syntax. The size limit is the reader's (it never reads
 * more).
 */
export function checkPluginOutput(text: string, plugin: Pick<PluginSpec, 'namespaces'>, protectedKeys: readonly string[] = []): PluginOutput {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return refused(`output is not valid JSON: ${clip((err as Error).message, 200)}`);
  }
  if (!isRecord(parsed)) return refused('output must be a JSON object mapping node names to objects of labels');
  const nodes = Object.keys(parsed);
  if (nodes.length > MAX_PLUGIN_NODES) return refused(`output names ${nodes.length} nodes; at most ${MAX_PLUGIN_NODES}`);
  const defects: string[] = [];
  let defectCount = 0;
  const defect = (message: string) => {
    defectCount++;
    if (defects.length < MAX_OUTPUT_ERRORS) defects.push(message);
  };
  const labels: PluginLabels = {};
  let labelCount = 0;
  for (const node of nodes) {
    const value = parsed[node];
    const nameErrors = dns1123SubdomainErrors(node);
    if (nameErrors.length > 0) defect(`node name ${quote(node)}: ${nameErrors.join('; ')}`);
    if (!isRecord(value)) {
      defect(`node ${quote(node)}: labels must be an object of label keys to string values`);
      continue;
    }
    const entries = Object.entries(value);
    if (entries.length > MAX_PLUGIN_LABELS_PER_NODE) defect(`node ${quote(node)}: ${entries.length} labels; at most ${MAX_PLUGIN_LABELS_PER_NODE} a node`);
    const own: Record<string, string> = {};
    for (const [key, v] of entries) {
      const at = `node ${quote(node)} label ${quote(key)}`;
      if (typeof v !== 'string') {
        defect(`${at}: value must be a string`);
        continue;
      }
      const keyErrors = labelKeyErrors(key);
      if (keyErrors.length > 0) defect(`${at}: ${keyErrors.join('; ')}`);
      else if (!plugin.namespaces.some((glob) => matchesNamespace(key, glob)))
        defect(`${at}: key is outside the plugin's namespaces (${plugin.namespaces.join(', ')})`);
      else if (isKubeletLabelKey(key)) defect(`${at}: key is owned by the kubelet`);
      else if (isProtectedLabelKey(key, protectedKeys)) defect(`${at}: key is protected by the label policy`);
      for (const m of labelValueErrors(v)) defect(`${at}: value ${quote(v)}: ${m}`);
      own[key] = v;
    }
    labels[node] = Object.fromEntries(Object.entries(own).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    labelCount += Object.keys(own).length;
  }
  if (defectCount > 0) {
    const more = defectCount > defects.length ? ` (${defectCount - defects.length} more not listed)` : '';
    return { ok: false, error: `output refused: ${defectCount} defect(s)${more}: ${defects.join('; ')}`, defects, defectCount };
  }
  return { ok: true, labels, nodes: nodes.length, labelCount };
}

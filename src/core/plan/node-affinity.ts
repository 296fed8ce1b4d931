/**
 * Label and node selectors as Kubernetes evaluates them, in relabel's own
 * small types: a pod's `nodeSelector`, its required node affinity
 * (`nodeSelectorTerms`: terms ORed, requirements ANDed, `matchFields` on
 * `metadata.name`), and the `LabelSelector` of a PodDisruptionBudget.
 *
 * The semantics follow k8s.io/component-helpers `nodeaffinity`
 * (`GetRequiredNodeAffinity`, the lazy-error node selector) and
 * k8s.io/apimachinery `labels.NewRequirement` / `Requirement.Matches` and
 * `metav1.LabelSelectorAsSelector`. A requirement Kubernetes refuses to
 * parse makes its term (or its label selector) match nothing, as it does in
 * the scheduler and the controllers, which ignore the parse error.
 */
import { labelKeyErrors, labelValueErrors } from './label-syntax.ts';

/** One requirement of a node selector term or a label selector: `key operator values`. */
export type SelectorRequirement = { key: string; operator: string; values?: readonly string[] };

/** One term of a node selector: its label expressions and field expressions, ANDed. */
export type NodeSelectorTerm = {
  matchExpressions?: readonly SelectorRequirement[];
  matchFields?: readonly SelectorRequirement[];
};

/** A required node affinity (`requiredDuringSchedulingIgnoredDuringExecution`): its terms, ORed. */
export type NodeSelector = { nodeSelectorTerms: readonly NodeSelectorTerm[] };

/** A label selector (`metav1.LabelSelector`): `matchLabels` and `matchExpressions`, ANDed. */
export type LabelSelector = {
  matchLabels?: Readonly<Record<string, string>>;
  matchExpressions?: readonly SelectorRequirement[];
};

/** What a node selector looks at on a Node: its name and labels. */
export type SelectedNode = { name: string; labels: Readonly<Record<string, string>> };

/** The only field a node selector term's `matchFields` may name. */
export const NODE_NAME_FIELD = 'metadata.name';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * A decimal integer as Go's `strconv.ParseInt(s, 10, 64)` reads it: an
 * optional sign, then ASCII digits only, within int64. Undefined otherwise
 * (empty, spaces, `1e3`, `0x10`, `1_000`, out of range).
 */
export function parseInt64(text: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(text)) return undefined;
  const value = BigInt(text);
  return value < INT64_MIN || value > INT64_MAX ? undefined : value;
}

/** Operators of a label requirement, by the names the API uses. */
const LABEL_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'] as const;
type LabelOperator = (typeof LABEL_OPERATORS)[number];

/** A requirement that parsed: its operator known, its values as the operator needs them. */
type Requirement = { key: string; operator: LabelOperator; values: readonly string[] };

/**
 * A requirement as `labels.NewRequirement` accepts it, or undefined where
 * it returns an error: a key that is not a label key, values that are not
 * label values, In/NotIn without values, Exists/DoesNotExist with values,
 * Gt/Lt without exactly one integer value. `allowed` limits the operators
 * (a label selector has no Gt/Lt).
 */
function parseRequirement(requirement: SelectorRequirement, allowed: readonly LabelOperator[]): Requirement | undefined {
  const operator = allowed.find((op) => op === requirement.operator);
  if (!operator || labelKeyErrors(requirement.key).length > 0) return undefined;
  const values = requirement.values ?? [];
  if (values.some((value) => labelValueErrors(value).length > 0)) return undefined;
  switch (operator) {
    case 'In':
    case 'NotIn':
      return values.length > 0 ? { key: requirement.key, operator, values } : undefined;
    case 'Exists':
    case 'DoesNotExist':
      return values.length === 0 ? { key: requirement.key, operator, values } : undefined;
    case 'Gt':
    case 'Lt':
      return values.length === 1 && parseInt64(values[0] ?? '') !== undefined ? { key: requirement.key, operator, values } : undefined;
  }
}

/** True when `labels` satisfy one parsed requirement (`Requirement.Matches`). */
function satisfies(requirement: Requirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.hasOwn(labels, requirement.key);
  const value = has ? labels[requirement.key] : undefined;
  switch (requirement.operator) {
    case 'In':
      return value !== undefined && requirement.values.includes(value);
    case 'NotIn':
      // An absent key satisfies NotIn: only a present value in the set fails it.
      return value === undefined || !requirement.values.includes(value);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      // A label value that is not an integer satisfies neither Gt nor Lt.
      const actual = value === undefined ? undefined : parseInt64(value);
      const bound = parseInt64(requirement.values[0] ?? '');
      if (actual === undefined || bound === undefined) return false;
      return requirement.operator === 'Gt' ? actual > bound : actual < bound;
    }
  }
}

/**
 * Parses every requirement, ANDed; undefined when one does not parse (the
 * whole selector is refused, as Kubernetes refuses it).
 */
function parseAll(requirements: readonly SelectorRequirement[], allowed: readonly LabelOperator[]): Requirement[] | undefined {
  const parsed: Requirement[] = [];
  for (const requirement of requirements) {
    const one = parseRequirement(requirement, allowed);
    if (!one) return undefined;
    parsed.push(one);
  }
  return parsed;
}

/**
 * True when a node's `labels` hold every key of a pod's `nodeSelector`
 * with that value (an empty or absent selector matches every node). Like
 * `labels.SelectorFromSet`, keys and values are not validated.
 */
export function matchesNodeSelector(selector: Readonly<Record<string, string>> | undefined, labels: Readonly<Record<string, string>>): boolean {
  for (const [key, value] of Object.entries(selector ?? {})) {
    if (!Object.hasOwn(labels, key) || labels[key] !== value) return false;
  }
  return true;
}

/**
 * A term's field expressions against the node's name: only In and NotIn,
 * each with exactly one value (anything else does not parse, so the term
 * matches nothing). A field other than `metadata.name` reads as empty, as
 * Kubernetes' field set has no other.
 */
function matchesFields(fields: readonly SelectorRequirement[], node: SelectedNode): boolean | undefined {
  let all = true;
  for (const field of fields) {
    const values = field.values ?? [];
    if ((field.operator !== 'In' && field.operator !== 'NotIn') || values.length !== 1) return undefined;
    const actual = field.key === NODE_NAME_FIELD ? node.name : '';
    if ((actual === values[0]) !== (field.operator === 'In')) all = false;
  }
  return all;
}

/**
 * True when one node selector term matches `node`. A term with neither
 * label nor field expressions matches nothing; a term holding a requirement
 * that does not parse matches nothing either.
 */
function matchesTerm(term: NodeSelectorTerm, node: SelectedNode): boolean {
  const expressions = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (expressions.length === 0 && fields.length === 0) return false;
  const requirements = parseAll(expressions, LABEL_OPERATORS);
  const fieldsMatch = fields.length === 0 ? true : matchesFields(fields, node);
  // Parse errors are checked before matching, as the term is parsed whole.
  if (!requirements || fieldsMatch === undefined) return false;
  // Kubernetes skips the field check for a node without a name (its field set is empty).
  if (!requirements.every((r) => satisfies(r, node.labels))) return false;
  return node.name === '' || fieldsMatch;
}

/**
 * True when a pod's required node affinity lets it run on `node`: some term
 * matches (terms ORed, each term's requirements ANDed). No affinity (undefined)
 * matches every node; an affinity with no terms matches none.
 */
export function matchesRequiredAffinity(affinity: NodeSelector | undefined, node: SelectedNode): boolean {
  if (!affinity) return true;
  return affinity.nodeSelectorTerms.some((term) => matchesTerm(term, node));
}

/**
 * True when a pod with `nodeSelector` and required node `affinity` may be
 * placed on `node` (`GetRequiredNodeAffinity(pod).Match(node)`): both must match.
 */
export function matchesNodePlacement(
  nodeSelector: Readonly<Record<string, string>> | undefined,
  affinity: NodeSelector | undefined,
  node: SelectedNode,
): boolean {
  return matchesNodeSelector(nodeSelector, node.labels) && matchesRequiredAffinity(affinity, node);
}

/**
 * True when a label selector (a PodDisruptionBudget's `spec.selector`)
 * selects an object with `labels`, as `metav1.LabelSelectorAsSelector`:
 * null or absent selects nothing; an empty selector selects everything;
 * `matchLabels` are equalities; `matchExpressions` allow In, NotIn, Exists
 * and DoesNotExist; a selector that does not parse selects nothing.
 */
export function matchesLabelSelector(selector: LabelSelector | null | undefined, labels: Readonly<Record<string, string>>): boolean {
  if (!selector) return false;
  const equalities = Object.entries(selector.matchLabels ?? {}).map(([key, value]): SelectorRequirement => ({ key, operator: 'In', values: [value] }));
  const requirements = parseAll([...equalities, ...(selector.matchExpressions ?? [])], ['In', 'NotIn', 'Exists', 'DoesNotExist']);
  return requirements !== undefined && requirements.every((r) => satisfies(r, labels));
}

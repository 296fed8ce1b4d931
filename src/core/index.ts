/**
 * relabel's pure core: site document schemas, validation and Drydock
 * inheritance, desired labels, Kubernetes label syntax, the label planner and
 * node filters. No I/O, no Node built-ins, no Temporal: workflow code may
 * import it.
 */
export * from './constants.ts';
export * from './failure-types.ts';
export { validateSite, desiredLabelsFor } from './validate-site.ts';
export type { Design, DesignNode, DesignRack, SiteDocument, SiteValidation } from './validate-site.ts';
export type { SiteSource } from './yaml-source.ts';
export { formatError, formatPath, sortErrors, compareErrors } from './site-error.ts';
export type { SiteError, DocumentRef, PathSegment } from './site-error.ts';
export {
  SchemaName,
  DOCUMENT_METADATA_SCHEMA,
  DocumentMetadata,
  BaremetalNode,
  BaremetalNodeData,
  HostProfile,
  HostProfileData,
  HostMetadata,
  Rack,
  RackData,
  Region,
  RegionData,
  LabelMap,
} from './schema.ts';
export {
  LabelPolicy,
  LabelPolicyData,
  DEFAULT_SITE_POLICY,
  generatedLabelKeys,
  sitePolicyFrom,
} from './label-policy.ts';
export type { SitePolicy } from './label-policy.ts';
export { TAG_LABEL_VALUE } from './desired-labels.ts';
export {
  labelKeyErrors,
  labelValueErrors,
  dns1123SubdomainErrors,
  isValidLabelKey,
  isValidLabelValue,
} from './label-syntax.ts';
export { KUBELET_LABEL_KEYS, OS_ARCH_ALIASES, isKubeletLabelKey, isProtectedLabelKey } from './label-keys.ts';
export { readOwnedLabels, formatOwnedLabels } from './owned-labels.ts';
export type { OwnedLabels } from './owned-labels.ts';
export { planLabels, applyPlan, applyOwnership, labelPatch } from './label-plan.ts';
export type { LabelPlan, LabelPlanInput, PlanPolicy, NodeLabelPatch } from './label-plan.ts';
export { reconcileNodeLabels, STALE } from './node-reconcile.ts';
export type { NodeLabelState, ReconcileOutcome, ReconcileSteps } from './node-reconcile.ts';
export { FilterSetType, NodeFilter, NodeFilterSet, parseNodeFilter, selectNodes } from './node-filter.ts';
export type { NodeFilterError, NodeFilterParse, NodeSelection } from './node-filter.ts';

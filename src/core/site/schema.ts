/**
 * zod schemas of the site documents relabel interprets. Each is a Deckhand
 * envelope `{schema, metadata, data}`; `.strict()` everywhere, because these
 * documents decide which labels get deleted. Drydock fields relabel does not
 * interpret are listed by name and accepted with any content, so a real
 * Drydock site validates, while a misspelt field we do interpret (say
 * `owner-data`) is an error instead of being silently ignored.
 */
import { z } from 'zod';
import { TAINT_EFFECTS } from '../plan/constants.ts';

/** Schema names (the envelope's `schema` field) relabel interprets. */
export const SchemaName = {
  BaremetalNode: 'drydock/BaremetalNode/v1',
  HostProfile: 'drydock/HostProfile/v1',
  Rack: 'drydock/Rack/v1',
  Region: 'drydock/Region/v1',
  LabelPolicy: 'relabel/LabelPolicy/v1',
  LabelPlugin: 'relabel/LabelPlugin/v1',
  NodeSet: 'relabel/NodeSet/v1',
} as const;

/** One of the {@link SchemaName} strings. */
export type SchemaName = (typeof SchemaName)[keyof typeof SchemaName];

/** Namespace reserved for relabel's own schemas: an unknown `relabel/…` schema is an error. */
export const RELABEL_SCHEMA_NAMESPACE = 'relabel/';

/** The `metadata.schema` every document carries. */
export const DOCUMENT_METADATA_SCHEMA = 'metadata/Document/v1';

const nonEmpty = (what: string) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? `${what} is required` : `${what} must be a string`) })
    .min(1, { error: `${what} must be non-empty` });

/**
 * A label value in a document. YAML reads `true`, `1.0` or `42` as
 * non-strings, so the message says to quote them.
 */
export const LabelValue = z.string({
  error: (issue) => (issue.input === undefined ? 'label value is required' : `label values must be strings; quote it in YAML (e.g. "${String(issue.input)}")`),
});
/** A label value in a document. */
export type LabelValue = z.infer<typeof LabelValue>;

/** A map of label keys to values, as written in a document (keys are checked separately). */
export const LabelMap = z.record(z.string(), LabelValue);
/** A map of label keys to values. */
export type LabelMap = z.infer<typeof LabelMap>;

/**
 * An annotation value in a document: any string (Kubernetes bounds only the
 * node's total). YAML reads `true` or `42` as non-strings, so the message
 * says to quote them.
 */
export const AnnotationValue = z.string({
  error: (issue) =>
    issue.input === undefined ? 'annotation value is required' : `annotation values must be strings; quote it in YAML (e.g. "${String(issue.input)}")`,
});

/** A map of annotation keys to values, as written in a document (keys are checked separately). */
export const AnnotationMap = z.record(z.string(), AnnotationValue);
/** A map of annotation keys to values. */
export type AnnotationMap = z.infer<typeof AnnotationMap>;

export { TAINT_EFFECTS, type TaintEffect } from '../plan/constants.ts';

/**
 * A taint as written in a document. `effect` is required except on a
 * deletion (`key: "!k"`), which removes the parent's taints with key `k`
 * (only the one with `effect` when given); the syntax of keys and values is
 * checked separately.
 */
export const TaintEntry = z
  .object({
    key: nonEmpty('taint key'),
    value: z.string({ error: 'taint value must be a string; quote it in YAML' }).optional(),
    effect: z.enum(TAINT_EFFECTS, { error: `taint effect must be one of ${TAINT_EFFECTS.join(', ')}` }).optional(),
  })
  .strict();
/** A taint as written in a document. */
export type TaintEntry = z.infer<typeof TaintEntry>;

/**
 * Deckhand document metadata. Layering and substitution fields are accepted
 * for compatibility: relabel reads *rendered* documents, so Deckhand has
 * already applied them.
 */
export const DocumentMetadata = z
  .object({
    schema: z.literal(DOCUMENT_METADATA_SCHEMA, { error: `metadata.schema must be "${DOCUMENT_METADATA_SCHEMA}"` }),
    name: nonEmpty('metadata.name'),
    labels: z.record(z.string(), z.string()).optional(),
    layeringDefinition: z
      .object({
        abstract: z.boolean().optional(),
        layer: z.string(),
        parentSelector: z.record(z.string(), z.string()).optional(),
        actions: z.array(z.unknown()).optional(),
      })
      .strict()
      .optional(),
    storagePolicy: z.enum(['cleartext', 'encrypted']).optional(),
    substitutions: z.array(z.unknown()).optional(),
    replacement: z.boolean().optional(),
  })
  .strict();
/** Deckhand document metadata. */
export type DocumentMetadata = z.infer<typeof DocumentMetadata>;

/**
 * The envelope checked on documents of schemas relabel does not interpret:
 * they pass through untouched, but must still be Deckhand documents.
 */
export const PassThroughDocument = z
  .object({
    schema: z.string({ error: 'schema is required' }).regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+\/v\d+$/, { error: 'schema must look like "namespace/Kind/v1"' }),
    metadata: z.object({ schema: z.string(), name: nonEmpty('metadata.name') }).loose(),
  })
  .loose();
/** A document of a schema relabel does not interpret. */
export type PassThroughDocument = z.infer<typeof PassThroughDocument>;

/**
 * `data.metadata` of a node or host profile: what relabel interprets.
 * `owner_data` keys starting with `!` delete the parent's key; tags starting
 * with `!` remove the parent's tag; rack `'!'` unsets the parent's rack.
 * `annotations` inherit as `owner_data` does; a taint written with key `!k`
 * removes the parent's taints with key `k`. `boot_mac` is Drydock's and ignored.
 */
export const HostMetadata = z
  .object({
    owner_data: LabelMap.optional(),
    annotations: AnnotationMap.optional(),
    taints: z.array(TaintEntry).optional(),
    tags: z.array(nonEmpty('tag')).optional(),
    rack: nonEmpty('rack').optional(),
    boot_mac: z.unknown().optional(),
  })
  .strict();
/** `data.metadata` of a node or host profile. */
export type HostMetadata = z.infer<typeof HostMetadata>;

// Drydock host fields relabel accepts but never reads.
const drydockHostFields = {
  oob: z.unknown().optional(),
  storage: z.unknown().optional(),
  platform: z.unknown().optional(),
  interfaces: z.unknown().optional(),
  hardware_profile: z.unknown().optional(),
  primary_network: z.unknown().optional(),
  vendor_data: z.unknown().optional(),
};

/** `data` of a `drydock/HostProfile/v1`: `host_profile` names its parent. */
export const HostProfileData = z
  .object({ host_profile: nonEmpty('host_profile').optional(), metadata: HostMetadata.optional(), ...drydockHostFields })
  .strict();
/** `data` of a host profile. */
export type HostProfileData = z.infer<typeof HostProfileData>;

/** `data` of a `drydock/BaremetalNode/v1`: as a host profile, plus Drydock's `addressing`. */
export const BaremetalNodeData = z
  .object({
    host_profile: nonEmpty('host_profile').optional(),
    metadata: HostMetadata.optional(),
    addressing: z.unknown().optional(),
    ...drydockHostFields,
  })
  .strict();
/** `data` of a baremetal node. */
export type BaremetalNodeData = z.infer<typeof BaremetalNodeData>;

/** `data` of a `drydock/Rack/v1`: `labels` are given to every node in the rack. */
export const RackData = z
  .object({
    labels: LabelMap.optional(),
    tor_switches: z.unknown().optional(),
    location: z.unknown().optional(),
    local_networks: z.unknown().optional(),
  })
  .strict();
/** `data` of a rack. */
export type RackData = z.infer<typeof RackData>;

/** `data` of a `drydock/Region/v1`: only its `metadata.name` (the site name) is read. */
export const RegionData = z
  .object({
    tag_definitions: z.unknown().optional(),
    authorized_keys: z.unknown().optional(),
    repositories: z.unknown().optional(),
  })
  .strict();
/** `data` of a region. */
export type RegionData = z.infer<typeof RegionData>;

/** Builds the strict envelope schema `{schema, metadata, data}` of one interpreted document kind. */
export function documentEnvelope<S extends SchemaName, D extends z.ZodType>(schema: S, data: D) {
  return z.object({ schema: z.literal(schema), metadata: DocumentMetadata, data }).strict();
}

/** A `drydock/BaremetalNode/v1` document; `metadata.name` is the Kubernetes Node name. */
export const BaremetalNode = documentEnvelope(SchemaName.BaremetalNode, BaremetalNodeData);
/** A baremetal node document. */
export type BaremetalNode = z.infer<typeof BaremetalNode>;

/** A `drydock/HostProfile/v1` document. */
export const HostProfile = documentEnvelope(SchemaName.HostProfile, HostProfileData);
/** A host profile document. */
export type HostProfile = z.infer<typeof HostProfile>;

/** A `drydock/Rack/v1` document; `metadata.name` is the rack name. */
export const Rack = documentEnvelope(SchemaName.Rack, RackData);
/** A rack document. */
export type Rack = z.infer<typeof Rack>;

/** A `drydock/Region/v1` document; `metadata.name` is the site name. */
export const Region = documentEnvelope(SchemaName.Region, RegionData);
/** A region document. */
export type Region = z.infer<typeof Region>;

/**
 * `data` of a `relabel/NodeSet/v1`: the nodes a label `selector` matches
 * (checked by `selectorProblems`, `core/plan/label-selector.ts`, so that
 * each problem is named at its field), managed as if a BaremetalNode with
 * this `host_profile` and `metadata` named each.
 */
export const NodeSetData = z
  .object({
    // Required: its absence is reported with the selector's own checks.
    selector: z.unknown().optional(),
    host_profile: nonEmpty('host_profile').optional(),
    metadata: HostMetadata.optional(),
  })
  .strict();
/** `data` of a node set. */
export type NodeSetData = z.infer<typeof NodeSetData>;

/** A `relabel/NodeSet/v1` document; `metadata.name` names the set. */
export const NodeSet = documentEnvelope(SchemaName.NodeSet, NodeSetData);
/** A node set document. */
export type NodeSet = z.infer<typeof NodeSet>;

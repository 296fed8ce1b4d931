/**
 * A page of Nodes as the API server sends it in Kubernetes' protobuf
 * encoding. The server encodes protobuf several times faster than JSON,
 * and listing is most of its share of a large run; only the fields relabel
 * reads are decoded (name, uid, resourceVersion, labels, annotations,
 * taints, the page's continue token), everything else (status, managed
 * fields) is skipped by length.
 *
 * The messages below are a subset of Kubernetes' own definitions
 * (k8s.io/api/core/v1 and k8s.io/apimachinery/pkg/apis/meta/v1 and
 * pkg/runtime `generated.proto`), with the same field numbers. The server
 * wraps each answer in `runtime.Unknown` after a four-byte magic number.
 */
import protobuf from 'protobufjs';

const str = (id: number) => ({ type: 'string', id });
const stringMap = (id: number): protobuf.IField => ({ keyType: 'string', type: 'string', id }) as protobuf.IMapField;

const root = protobuf.Root.fromJSON({
  nested: {
    Unknown: { fields: { raw: { type: 'bytes', id: 2 }, contentEncoding: str(3) } },
    ListMeta: { fields: { resourceVersion: str(2), continue: str(3), remainingItemCount: { type: 'int64', id: 4 } } },
    NodeList: { fields: { metadata: { type: 'ListMeta', id: 1 }, items: { rule: 'repeated', type: 'Node', id: 2 } } },
    Node: { fields: { metadata: { type: 'ObjectMeta', id: 1 }, spec: { type: 'NodeSpec', id: 2 } } },
    ObjectMeta: {
      fields: {
        name: str(1),
        uid: str(5),
        resourceVersion: str(6),
        labels: stringMap(11),
        annotations: stringMap(12),
      },
    },
    NodeSpec: { fields: { taints: { rule: 'repeated', type: 'Taint', id: 5 } } },
    Taint: { fields: { key: str(1), value: str(2), effect: str(3), timeAdded: { type: 'Time', id: 4 } } },
    Time: { fields: { seconds: { type: 'int64', id: 1 } } },
    Status: { fields: { status: str(2), message: str(3), reason: str(4), code: { type: 'int32', id: 6 } } },
  },
});

const Unknown = root.lookupType('Unknown');
const NodeList = root.lookupType('NodeList');
const ListMeta = root.lookupType('ListMeta');
const Status = root.lookupType('Status');

/** The media type to ask for: protobuf, or JSON from a server (or proxy) that cannot. */
export const PROTOBUF_OR_JSON = 'application/vnd.kubernetes.protobuf, application/json';

/** Whether an answer's Content-Type is Kubernetes protobuf. */
export function isProtobuf(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() === 'application/vnd.kubernetes.protobuf';
}

const MAGIC = [0x6b, 0x38, 0x73, 0x00];

/** The message inside the server's envelope; throws on anything else. */
function unwrap(bytes: Uint8Array): Uint8Array {
  if (bytes.length < MAGIC.length || MAGIC.some((b, i) => bytes[i] !== b)) throw new Error('not a Kubernetes protobuf answer (no magic number)');
  const unknown = Unknown.decode(bytes.subarray(MAGIC.length)) as unknown as { raw: Uint8Array; contentEncoding: string };
  if (unknown.contentEncoding) throw new Error(`Kubernetes protobuf answer in an unsupported encoding: ${unknown.contentEncoding.slice(0, 40)}`);
  return unknown.raw;
}

type Long = { toNumber(): number };
/** An int64 as protobufjs decodes it: a number, or a Long when the long library is loaded. */
const int64 = (n: number | Long) => (typeof n === 'number' ? n : n.toNumber());
interface TaintMessage {
  key: string;
  value: string;
  effect: string;
  timeAdded?: { seconds: number | Long } | null;
}
interface NodeMessage {
  metadata?: { name: string; uid: string; resourceVersion: string; labels: Record<string, string>; annotations: Record<string, string> } | null;
  spec?: { taints: TaintMessage[] } | null;
}

/**
 * A Node as the client's model shapes it (`toNodeState` reads it): only the
 * fields decoded, and an empty string left out as JSON leaves it out.
 */
export interface ListedNode {
  metadata: { name: string; uid?: string; resourceVersion: string; labels: Record<string, string>; annotations: Record<string, string> };
  spec: { taints?: { key: string; effect: string; value?: string; timeAdded?: Date }[] };
}

function listedNode(node: NodeMessage): ListedNode {
  const m = node.metadata;
  const taints = node.spec?.taints ?? [];
  return {
    metadata: {
      name: m?.name ?? '',
      ...(m?.uid ? { uid: m.uid } : {}),
      resourceVersion: m?.resourceVersion ?? '',
      labels: m?.labels ?? {},
      annotations: m?.annotations ?? {},
    },
    spec:
      taints.length === 0
        ? {}
        : {
            taints: taints.map((t) => ({
              key: t.key,
              effect: t.effect,
              ...(t.value ? { value: t.value } : {}),
              ...(t.timeAdded ? { timeAdded: new Date(int64(t.timeAdded.seconds) * 1000) } : {}),
            })),
          },
  };
}

/**
 * A NodeList answer: its Nodes, the token of the next page (empty on the
 * last), the list's resourceVersion and, when the server counted them, how
 * many Nodes the later pages hold.
 */
export function decodeNodeList(bytes: Uint8Array): { items: ListedNode[]; continue: string; resourceVersion: string; remainingItemCount?: number } {
  const list = NodeList.decode(unwrap(bytes)) as unknown as {
    metadata?: { continue: string; resourceVersion: string; remainingItemCount: number | Long } | null;
    items: NodeMessage[];
  };
  const meta = list.metadata;
  // Set only when the server sent it: a decoded message holds the fields it read as its own.
  const remaining = meta && Object.hasOwn(meta, 'remainingItemCount') ? { remainingItemCount: int64(meta.remainingItemCount) } : {};
  return { items: list.items.map(listedNode), continue: meta?.continue ?? '', resourceVersion: meta?.resourceVersion ?? '', ...remaining };
}

/** Tags of the length-delimited fields read: field number 1 and 2, wire type 2. */
const FIELD_1 = (1 << 3) | 2;
const FIELD_2 = (2 << 3) | 2;

/**
 * The list metadata of a NodeList answer read from its first bytes, as
 * the server writes it: the envelope's type (field 1), then its raw message
 * (field 2), which opens with the list's metadata (field 1). Undefined when
 * `prefix` ends before the metadata does; null when the answer is laid out
 * otherwise (the metadata comes with the whole answer then).
 */
export function listMetaPrefix(prefix: Uint8Array): { continue: string; resourceVersion: string } | null | undefined {
  if (prefix.length < MAGIC.length) return undefined;
  if (MAGIC.some((b, i) => prefix[i] !== b)) return null;
  const reader = protobuf.Reader.create(prefix.subarray(MAGIC.length));
  try {
    let tag = reader.uint32();
    if (tag === FIELD_1) {
      reader.skip(reader.uint32());
      tag = reader.uint32();
    }
    if (tag !== FIELD_2) return null;
    const rawEnd = reader.uint32() + reader.pos;
    if (reader.uint32() !== FIELD_1) return null;
    const length = reader.uint32();
    if (reader.pos + length > rawEnd) return null;
    if (reader.pos + length > reader.len) return undefined;
    const meta = ListMeta.decode(reader, length) as unknown as { continue: string; resourceVersion: string };
    return { continue: meta.continue, resourceVersion: meta.resourceVersion };
  } catch (err) {
    // The reader's only RangeError: the bytes so far end first.
    if (err instanceof RangeError) return undefined;
    throw err;
  }
}

/** A Status answer (an error) as the JSON API writes it, for the client's error handling. */
export function decodeStatus(bytes: Uint8Array): { kind: 'Status'; apiVersion: 'v1'; status: string; message: string; reason: string; code: number } {
  const s = Status.decode(unwrap(bytes)) as unknown as { status: string; message: string; reason: string; code: number };
  return { kind: 'Status', apiVersion: 'v1', status: s.status, message: s.message, reason: s.reason, code: s.code };
}

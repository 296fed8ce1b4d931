/**
 * Kubernetes Events about Nodes, through events.k8s.io/v1: the API made for
 * controllers' Events (reportingController, reportingInstance and action
 * are required fields, the note is bounded to 1 KiB by the server). Events
 * land in the same storage as core/v1 Events, so `kubectl get events` and
 * `kubectl describe node` show them. Every request takes a token from the
 * same client-side rate limiter as the Node requests.
 */
import { randomBytes } from 'node:crypto';
import { EventsV1Api, V1MicroTime, type KubeConfig } from '@kubernetes/client-node';
import { limited } from './nodes.ts';
import type { RateLimiter } from './rate-limit.ts';

/** The `reportingController` of every Event relabel records. */
export const REPORTING_CONTROLLER = 'relabel';

/** Namespace of Events about cluster-scoped objects such as Nodes (as the kubelet records them). */
export const NODE_EVENTS_NAMESPACE = 'default';

/** Longest note the API server accepts, in bytes of UTF-8. */
export const MAX_NOTE_BYTES = 1024;

/** Longest `reportingInstance` the API server accepts. */
export const MAX_REPORTING_INSTANCE = 128;

/** Reasons of relabel's Events about Nodes. */
export const NodeEventReason = {
  /** Normal: relabel wrote the node's labels (annotations, taints) for a run. */
  labelsApplied: 'LabelsApplied',
  /** Warning: relabel could not bring the node to the run's revision. */
  relabelFailed: 'RelabelFailed',
} as const;
/** One of the {@link NodeEventReason} strings. */
export type NodeEventReason = (typeof NodeEventReason)[keyof typeof NodeEventReason];

/** The `action` of relabel's Events. */
export const NODE_EVENT_ACTION = 'Relabel';

/** One Event about a Node. */
export interface NodeEvent {
  node: string;
  /** The Node's uid, so the Event names this Node and not a later one of the same name. */
  uid?: string;
  reason: NodeEventReason;
  /** Cut to {@link MAX_NOTE_BYTES} here when longer. */
  note: string;
}

/** Records Events about Nodes. Errors are the client's `ApiException` or network errors. */
export interface EventApi {
  /** Creates one Event about a Node. */
  createNodeEvent(event: NodeEvent): Promise<void>;
}

/** `text` cut to at most `max` bytes of UTF-8, ending with `…` when cut; never splits a character. */
export function clipBytes(text: string, max: number): string {
  if (Buffer.byteLength(text, 'utf8') <= max) return text;
  const room = max - Buffer.byteLength('…', 'utf8');
  let end = 0;
  let bytes = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch, 'utf8');
    if (bytes + size > room) break;
    bytes += size;
    end += ch.length;
  }
  return `${text.slice(0, end)}…`;
}

/**
 * A new Event's name: the node's name (cut to leave room), a dot, the time
 * in hexadecimal milliseconds and a random suffix, as the kubelet names its
 * Events (`node.hex`): a valid, practically unique DNS subdomain.
 */
export function eventName(node: string, now: number = Date.now()): string {
  const base = node.slice(0, 220).replace(/[.-]+$/, '') || 'node';
  return `${base}.${now.toString(16)}${randomBytes(4).toString('hex')}`;
}

/**
 * An {@link EventApi} over `api`: Events in {@link NODE_EVENTS_NAMESPACE}
 * named by {@link eventName}, type Warning for
 * RelabelFailed and Normal otherwise, reportingController
 * {@link REPORTING_CONTROLLER}, reportingInstance `instance` (cut to
 * {@link MAX_REPORTING_INSTANCE}), action {@link NODE_EVENT_ACTION}. Each
 * request takes a token from `limiter` first (a 429 waits its Retry-After,
 * as Node requests do).
 */
export function eventApiOver(api: Pick<EventsV1Api, 'createNamespacedEvent'>, limiter: RateLimiter, instance: string): EventApi {
  const reportingInstance = instance.slice(0, MAX_REPORTING_INSTANCE) || 'relabel';
  return {
    async createNodeEvent(event) {
      const body = {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: eventName(event.node), namespace: NODE_EVENTS_NAMESPACE, labels: { 'app.kubernetes.io/managed-by': REPORTING_CONTROLLER } },
        eventTime: new V1MicroTime(),
        type: event.reason === NodeEventReason.relabelFailed ? 'Warning' : 'Normal',
        reason: event.reason,
        action: NODE_EVENT_ACTION,
        note: clipBytes(event.note, MAX_NOTE_BYTES),
        reportingController: REPORTING_CONTROLLER,
        reportingInstance,
        regarding: { apiVersion: 'v1', kind: 'Node', name: event.node, ...(event.uid ? { uid: event.uid } : {}) },
      };
      await limited(limiter, () => api.createNamespacedEvent({ namespace: NODE_EVENTS_NAMESPACE, body }));
    },
  };
}

/** An {@link EventApi} backed by @kubernetes/client-node, sharing `limiter` with the Node requests. */
export function createEventApi(kc: KubeConfig, limiter: RateLimiter, instance: string): EventApi {
  return eventApiOver(kc.makeApiClient(EventsV1Api), limiter, instance);
}

/**
 * The Stages KWOK plays on the nodes and pods it manages: what a kubelet
 * would write. The `kwok` binary run on its own has no Stages (kwokctl
 * writes them into its config), so the stack writes its own config file:
 * a node becomes Ready once, then heartbeats its status every interval; a
 * pod bound to a managed node starts Running, and goes away once deleted.
 *
 * Stages are KWOK's `kwok.x-k8s.io/v1alpha1` `Stage` objects: a selector
 * (jq expressions over the object), an optional delay, and steps; a patch
 * step's template is a Go template rendering YAML, with KWOK's functions
 * (`Now`, `Quote`, `NodeConditions`, `NodeIP`, `PodIPsWith`, …).
 */

/** When KWOK's node heartbeat runs and how its lease is kept. */
export interface KwokHeartbeat {
  /**
   * Seconds between two status heartbeats of a node (each moves the Node's
   * resourceVersion), plus a random 0–10 %; 0 turns them off (the status is
   * written once, when the node becomes Ready). KWOK restarts the wait
   * whenever the node changes, so a node written more often than this does
   * not heartbeat.
   */
  heartbeatSeconds: number;
}

type Stage = Record<string, unknown>;

const jq = (key: string, operator: string, values?: string[]) => ({ jq: { key, operator, ...(values ? { values } : {}) } });
const READY = '.status.conditions.[] | select( .type == "Ready" ) | .status';

function stage(name: string, kind: 'Node' | 'Pod', spec: Record<string, unknown>): Stage {
  return { apiVersion: 'kwok.x-k8s.io/v1alpha1', kind: 'Stage', metadata: { name }, spec: { resourceRef: { apiGroup: 'v1', kind }, ...spec } };
}

/** A strategic merge patch of the object's status, rendered from `template`. */
function statusPatch(template: string) {
  return { patch: { subresource: 'status', root: 'status', template } };
}

/** Conditions of a healthy node (KWOK's `NodeConditions`), all stamped now. */
const NODE_CONDITIONS = `
conditions:
{{ range NodeConditions }}
- type: {{ .type | Quote }}
  status: {{ .status | Quote }}
  reason: {{ .reason | Quote }}
  message: {{ .message | Quote }}
  lastHeartbeatTime: {{ $now | Quote }}
  lastTransitionTime: {{ $now | Quote }}
{{ end }}`;

/**
 * A node not (or no longer) Ready: register it as a kubelet would, with room
 * for many pods unless its creator already said what it holds (Karpenter's
 * KWOK provider writes the instance type's capacity and allocatable).
 */
const NODE_READY = stage('relabel-node-ready', 'Node', {
  selector: { matchExpressions: [jq(READY, 'NotIn', ['True'])] },
  steps: [
    statusPatch(`{{ $now := Now }}${NODE_CONDITIONS}
addresses:
{{ with NodeIP }}
- type: InternalIP
  address: {{ . | Quote }}
{{ end }}
- type: Hostname
  address: {{ .metadata.name | Quote }}
{{ if not (and .status .status.allocatable) }}
capacity:
  cpu: "64"
  memory: 256Gi
  pods: "250"
allocatable:
  cpu: "64"
  memory: 256Gi
  pods: "250"
{{ end }}
nodeInfo:
  architecture: amd64
  operatingSystem: linux
  kubeletVersion: {{ printf "kwok-%s" Version | Quote }}
  kubeProxyVersion: {{ printf "kwok-%s" Version | Quote }}
  containerRuntimeVersion: {{ printf "kwok-%s" Version | Quote }}
  kernelVersion: {{ printf "kwok-%s" Version | Quote }}
  osImage: KWOK
  machineID: ""
  systemUUID: ""
  bootID: ""
phase: Running
`),
  ],
});

/**
 * A Ready node's heartbeat: only each condition's lastHeartbeatTime moves
 * (conditions merge by type, so transition times and reasons stay).
 */
function nodeHeartbeat(seconds: number): Stage {
  const ms = Math.round(seconds * 1000);
  return stage('relabel-node-heartbeat', 'Node', {
    selector: { matchExpressions: [jq('.status.phase', 'In', ['Running']), jq(READY, 'In', ['True'])] },
    delay: { durationMilliseconds: ms, jitterDurationMilliseconds: Math.round(ms * 1.1) },
    steps: [
      statusPatch(`{{ $now := Now }}
conditions:
{{ range NodeConditions }}
- type: {{ .type | Quote }}
  lastHeartbeatTime: {{ $now | Quote }}
{{ end }}
`),
    ],
  });
}

/** A pod bound to a managed node: its containers start at once and it is Ready. */
const POD_RUNNING = stage('relabel-pod-running', 'Pod', {
  selector: {
    matchExpressions: [jq('.metadata.deletionTimestamp', 'DoesNotExist'), jq('.status.phase', 'In', ['Pending'])],
  },
  steps: [
    statusPatch(`{{ $now := Now }}
phase: Running
startTime: {{ $now | Quote }}
conditions:
{{ range list "PodReadyToStartContainers" "Initialized" "ContainersReady" "Ready" }}
- type: {{ . | Quote }}
  status: "True"
  lastTransitionTime: {{ $now | Quote }}
{{ end }}
initContainerStatuses:
{{ range .spec.initContainers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  ready: true
  restartCount: 0
  state:
    terminated:
      exitCode: 0
      reason: Completed
      startedAt: {{ $now | Quote }}
      finishedAt: {{ $now | Quote }}
{{ end }}
containerStatuses:
{{ range .spec.containers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  ready: true
  started: true
  restartCount: 0
  state:
    running:
      startedAt: {{ $now | Quote }}
{{ end }}
{{ with PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
podIP: {{ index . 0 | Quote }}
podIPs:
{{ range . }}
- ip: {{ . | Quote }}
{{ end }}
{{ end }}
`),
  ],
});

/** A deleted pod on a managed node goes at once, as after its containers stopped (finalizers dropped first). */
const POD_GONE = stage('relabel-pod-gone', 'Pod', {
  selector: { matchExpressions: [jq('.metadata.deletionTimestamp', 'Exists')] },
  steps: [{ finalizers: { empty: true } }, { delete: true }],
});

/** The Stages for KWOK's config file, in order: nodes first, then pods. */
export function kwokStages(options: KwokHeartbeat): Stage[] {
  return [NODE_READY, ...(options.heartbeatSeconds > 0 ? [nodeHeartbeat(options.heartbeatSeconds)] : []), POD_RUNNING, POD_GONE];
}

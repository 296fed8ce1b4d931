#!/usr/bin/env bash
# Builds the local stack's servers from pinned Go modules into a cache outside
# the repository, once: the Temporal CLI (dev server + Web UI), kube-apiserver
# and etcd; the simulated cluster (kube-controller-manager, kube-scheduler and
# KWOK, which plays the kubelets); Node Feature Discovery's nfd-master for the
# benchmark; Keystone from PyPI into a Python venv; and, for the Helm chart's
# tests, helm and the Prometheus Operator's ServiceMonitor and PrometheusRule
# CRDs from their Go modules; Karpenter's KWOK cloud provider and its CRDs (NodePool, NodeClaim,
# KWOKNodeClass, …) for the simulated cluster's autoscaled nodes. Idempotent: a tool already in the cache is not
# rebuilt.
# Also temporal-server and temporal-sql-tool (go.temporal.io/server, pinned by
# tools/temporal-server/go.mod) for the stack's Temporal on PostgreSQL; not with --servers.
#
#   tools/build-tools.sh            build what is missing, print where it is
#   tools/build-tools.sh --print    print the cache directory only
#   tools/build-tools.sh --servers  the three servers only (the demo): not the
#                                   simulated cluster, nfd-master, Keystone, helm
#                                   or the CRDs
#
# RELABEL_TOOLS_DIR overrides the cache directory.
set -euo pipefail

TEMPORAL_CLI_VERSION=v1.5.1
KUBERNETES_VERSION=v1.36.3
# The control plane's cache key: its version, plus what the build stamps in (bump when the build changes).
KUBERNETES_BUILD=$KUBERNETES_VERSION-stamped
ETCD_VERSION=v3.6.16
KWOK_VERSION=v0.8.0
NFD_VERSION=v0.19.0
KEYSTONE_VERSION=30.0.0
# The Temporal server (and its SQL tool) that the stack runs on PostgreSQL with --temporal postgres; pinned by tools/temporal-server/go.mod.
TEMPORAL_SERVER_VERSION=v1.32.1
HELM_VERSION=v3.22.0
# Karpenter with its KWOK cloud provider (and the CRDs of that release); pinned by tools/karpenter/go.mod.
KARPENTER_VERSION=v1.14.1
# The Prometheus Operator release whose ServiceMonitor and PrometheusRule CRDs the chart's tests apply.
PROMETHEUS_OPERATOR_VERSION=v0.85.0

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${RELABEL_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/relabel/tools}

if [[ "${1:-}" == "--print" ]]; then
  echo "$cache"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "build-tools: Go is not installed or not on PATH; the local stack's servers are built from Go modules (Go >= 1.26 needed)." >&2
  exit 1
fi
go_version=$(go env GOVERSION 2>/dev/null || true)
if ! [[ "$go_version" =~ go([0-9]+)\.([0-9]+) ]] || ((BASH_REMATCH[1] == 1 && BASH_REMATCH[2] < 26)); then
  echo "build-tools: Go >= 1.26 is needed (the servers' go.mod files require it); $(command -v go) is ${go_version:-of unknown version}." >&2
  exit 1
fi

mkdir -p "$cache/bin"
export CGO_ENABLED=0 GOFLAGS=-mod=mod

# build NAME VERSION COMMAND...: runs COMMAND with $out set to a scratch
# directory, then moves $out/NAME into the cache under its version.
build() {
  local name=$1 version=$2
  shift 2
  local dest="$cache/$name-$version/$name"
  if [[ -x "$dest" ]]; then
    echo "build-tools: $name $version cached at $dest"
  else
    echo "build-tools: building $name $version (first time only; several minutes)..."
    local start=$SECONDS
    out=$(mktemp -d "$cache/.build-$name.XXXXXX")
    if ! "$@"; then
      rm -rf "$out"
      echo "build-tools: building $name $version failed" >&2
      exit 1
    fi
    mkdir -p "$(dirname "$dest")"
    mv "$out/$name" "$dest"
    rm -rf "$out"
    echo "build-tools: built $name $version in $((SECONDS - start))s"
  fi
  ln -sfn "$dest" "$cache/bin/$name"
}

build_temporal() { GOBIN="$out" go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION"; }
# The control plane's three binaries come from one module (tools/kubernetes), so one Kubernetes version,
# stamped in as Kubernetes' own release builds do (a plain go build reports v0.0.0-master+$Format:%H$, which
# kubectl version cannot parse and Helm's kubeVersion checks refuse).
build_kubernetes() {
  local v=k8s.io/component-base/version minor=${KUBERNETES_VERSION#v1.}
  minor=${minor%%.*}
  (cd "$here/kubernetes" && go build -trimpath \
    -ldflags "-X $v.gitVersion=$KUBERNETES_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean" \
    -o "$out/$1" "k8s.io/kubernetes/cmd/$1")
}
build_kube_apiserver() { build_kubernetes kube-apiserver; }
build_kube_controller_manager() { build_kubernetes kube-controller-manager; }
build_kube_scheduler() { build_kubernetes kube-scheduler; }
build_kwok() { GOBIN="$out" go install "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"; }
build_nfd_master() { (cd "$here/nfd" && go build -trimpath -o "$out/nfd-master" sigs.k8s.io/node-feature-discovery/cmd/nfd-master); }
build_etcd() { (cd "$here/etcd" && go build -trimpath -o "$out/etcd" .); }
# temporal-server and temporal-sql-tool from one module (tools/temporal-server), so one server version.
build_temporal_server() { (cd "$here/temporal-server" && go build -trimpath -o "$out/temporal-server" go.temporal.io/server/cmd/server); }
build_temporal_sql_tool() { (cd "$here/temporal-server" && go build -trimpath -o "$out/temporal-sql-tool" go.temporal.io/server/cmd/tools/sql); }
# helm, stamped as its Makefile stamps a release: its own version, and the Kubernetes version it
# assumes without a cluster (`helm template`, `helm lint`), taken from the client-go its go.mod
# requires (v0.37 -> 1.37). Unstamped it assumes v1.20.0, and the chart's kubeVersion refuses that.
build_helm() {
  local dir minor
  dir=$(go mod download -json "helm.sh/helm/v3@$HELM_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  minor=$(sed -n 's/^[[:space:]]*k8s\.io\/client-go v0\.\([0-9]*\)\..*/\1/p' "$dir/go.mod")
  [[ -n "$minor" ]] || return 1
  local x="-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  x+=" -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$minor"
  x+=" -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$minor"
  GOBIN="$out" go install -trimpath -ldflags "$x" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
}
# The two CRDs the Helm chart's optional ServiceMonitor and PrometheusRule need, taken as
# published in the operator's module (example/prometheus-operator-crd/), so the tests can have the
# API server validate those objects too.
fetch_prometheus_operator_crds() {
  local dir
  dir=$(go mod download -json "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [[ -n "$dir" ]] || return 1
  mkdir -p "$out/$1"
  cp "$dir/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml" \
    "$dir/example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml" "$out/$1/"
}

# Karpenter's KWOK cloud provider: Karpenter's controllers with a fake cloud that creates the Node of
# each NodeClaim itself (KWOK then plays its kubelet).
build_karpenter_kwok() { (cd "$here/karpenter" && go build -trimpath -o "$out/karpenter-kwok" sigs.k8s.io/karpenter/kwok); }
# The CRDs that provider serves, as its release publishes them: Karpenter's own (pkg/apis/crds) and
# the KWOKNodeClass (kwok/apis/crds), taken from the module tools/karpenter pins.
fetch_karpenter_crds() {
  local dir
  dir=$(cd "$here/karpenter" && go list -m -f '{{.Dir}}' sigs.k8s.io/karpenter)
  [[ -n "$dir" && -d "$dir/pkg/apis/crds" ]] || return 1
  mkdir -p "$out/$1"
  cp "$dir"/pkg/apis/crds/*.yaml "$dir"/kwok/apis/crds/*.yaml "$out/$1/"
}

# Keystone (OpenStack Identity) for the API's Keystone tests: a Python venv from PyPI, every
# package pinned by tools/keystone/constraints.txt. A venv cannot be moved (its scripts name
# its path), so it is made in place and marked complete last; an unmarked one is made again.
install_keystone() {
  local venv="$cache/keystone-venv-$KEYSTONE_VERSION"
  if [[ -f "$venv/.complete" ]]; then
    echo "build-tools: keystone $KEYSTONE_VERSION cached at $venv"
  else
    if ! command -v python3 >/dev/null 2>&1; then
      echo "build-tools: python3 is not installed or not on PATH; the test Keystone is installed from PyPI into a venv (Python >= 3.11 needed)." >&2
      exit 1
    fi
    echo "build-tools: installing keystone $KEYSTONE_VERSION into a venv (first time only; about a minute)..."
    local start=$SECONDS
    rm -rf "$venv"
    if ! python3 -m venv "$venv" ||
      ! "$venv/bin/pip" install --quiet --disable-pip-version-check -c "$here/keystone/constraints.txt" "keystone==$KEYSTONE_VERSION"; then
      rm -rf "$venv"
      echo "build-tools: installing keystone $KEYSTONE_VERSION failed" >&2
      exit 1
    fi
    touch "$venv/.complete"
    echo "build-tools: installed keystone $KEYSTONE_VERSION in $((SECONDS - start))s"
  fi
  ln -sfn "$venv" "$cache/keystone-venv"
}

build etcd "$ETCD_VERSION" build_etcd
build temporal "$TEMPORAL_CLI_VERSION" build_temporal
build kube-apiserver "$KUBERNETES_BUILD" build_kube_apiserver
if [[ "${1:-}" != "--servers" ]]; then
  build kube-controller-manager "$KUBERNETES_BUILD" build_kube_controller_manager
  build kube-scheduler "$KUBERNETES_BUILD" build_kube_scheduler
  build kwok "$KWOK_VERSION" build_kwok
  build nfd-master "$NFD_VERSION" build_nfd_master
  build temporal-server "$TEMPORAL_SERVER_VERSION" build_temporal_server
  build temporal-sql-tool "$TEMPORAL_SERVER_VERSION" build_temporal_sql_tool
  install_keystone
  build helm "$HELM_VERSION" build_helm
  build prometheus-operator-crds "$PROMETHEUS_OPERATOR_VERSION" fetch_prometheus_operator_crds prometheus-operator-crds
  build karpenter-kwok "$KARPENTER_VERSION" build_karpenter_kwok
  build karpenter-crds "$KARPENTER_VERSION" fetch_karpenter_crds karpenter-crds
fi

echo "build-tools: tools ready in $cache/bin"

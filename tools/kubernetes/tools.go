//go:build tools

// Package tools pins the Kubernetes control plane the local stack runs: kube-apiserver,
// kube-controller-manager and kube-scheduler, all of one Kubernetes version. Each binary is built
// with `go build k8s.io/kubernetes/cmd/<name>` from this module.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

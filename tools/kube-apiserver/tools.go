//go:build tools

// Package tools pins the kube-apiserver build; the binary itself is built
// with `go build k8s.io/kubernetes/cmd/kube-apiserver` from this module.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver/app"

//go:build tools

// Package tools pins Karpenter and its KWOK cloud provider, which the simulated cluster runs to
// create Nodes for pending pods; the binary is built with `go build sigs.k8s.io/karpenter/kwok`.
package tools

import _ "sigs.k8s.io/karpenter/kwok"

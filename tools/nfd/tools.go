//go:build tools

// Package tools pins Node Feature Discovery's nfd-master, which the benchmark runs beside relabel;
// the binary is built with `go build sigs.k8s.io/node-feature-discovery/cmd/nfd-master`.
package tools

import _ "sigs.k8s.io/node-feature-discovery/cmd/nfd-master"

//go:build tools

// Package tools pins the Temporal server that the local stack runs on PostgreSQL (the
// production-shaped Temporal, beside the CLI's dev server): temporal-server and
// temporal-sql-tool, both of one server version. Each binary is built with
// `go build go.temporal.io/server/cmd/...` from this module; the SQL schemas the tool installs
// ship in the same module (schema/postgresql/v12/).
package tools

import (
	_ "go.temporal.io/server/cmd/server"
	_ "go.temporal.io/server/cmd/tools/sql"
)

//go:build tools

// Package tools records the main package this module builds, so `go mod tidy` keeps its deps.
package tools

import _ "go.etcd.io/etcd/server/v3"

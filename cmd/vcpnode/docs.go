package main

import (
	"io"

	"github.com/vcpnode/vcpnode/config"
)

// The command reference in docs/commands is generated from the tree;
// TestCommandDocsAreCurrent fails when it is stale.
//go:generate go run -tags gendocs . -markdown ../../docs/commands

// docsApp is the app the reference is generated from: no environment and
// the system paths, so that the pages are the same wherever they are made.
func docsApp() *app {
	return &app{
		stdout:       io.Discard,
		stderr:       io.Discard,
		getenv:       func(string) string { return "" },
		systemConfig: "/etc/vcpnode/config.toml",
		systemSocket: config.SystemControlSocket,
	}
}

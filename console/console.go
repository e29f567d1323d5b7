// Package console holds the web console's page: plain HTML, CSS and JS
// modules, embedded so the binary serves them offline. It has no logic of
// its own; every action goes through the daemon's /v1/ API (package node
// serves both).
package console

import (
	"embed"
	"io/fs"
)

//go:embed static
var static embed.FS

// Assets is the page's files, index.html at the root.
func Assets() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the directory is embedded above; cannot happen
	}
	return sub
}

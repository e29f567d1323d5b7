// Package vcpnode holds the files kept at the module root that the binary
// carries: go:embed cannot reach them from cmd/vcpnode.
package vcpnode

import _ "embed"

// ConfigExample is config.example.toml: every setting, commented out, with
// its default. `vcpnode init` and `vcpnode service install` write configs
// from it, so the file stays the one place the settings are documented.
//
//go:embed config.example.toml
var ConfigExample string

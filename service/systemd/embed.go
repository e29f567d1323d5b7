// Package systemd renders vcpnode's systemd units from the templates kept
// beside this file, so that the binary (`vcpnode service install`) and the
// files shipped in systemd/ come from one source.
//
// vcpnode.service and vcpnode-user.service in this directory are the
// templates rendered with the default paths; a test keeps them in step
// (go test ./service/systemd -update rewrites them).
package systemd

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/vcpnode/vcpnode/service/internal/servicetmpl"
)

var (
	//go:embed vcpnode.service.tmpl
	systemTemplate string
	//go:embed vcpnode-user.service.tmpl
	userTemplate string
	//go:embed vcpnode-sysusers.conf
	sysusers []byte
)

// UnitName is the name both units are installed under.
const UnitName = "vcpnode.service"

// Unit holds what a rendered unit refers to.
type Unit struct {
	// Binary is the absolute path of the vcpnode executable.
	Binary string
	// Config is the absolute path of the config file.
	Config string
	// KeyFile, in the system unit, is passed to the service as the
	// credential vcp_key; empty leaves LoadCredential= out. The user unit
	// ignores it (the node reads hub.key_file itself).
	KeyFile string
}

// DefaultSystem is the system unit's layout: what service/systemd/vcpnode.service shows.
func DefaultSystem() Unit {
	return Unit{Binary: "/usr/local/bin/vcpnode", Config: "/etc/vcpnode/config.toml", KeyFile: "/etc/vcpnode/key"}
}

// DefaultPackage is the system unit the .deb and .rpm packages install
// (/usr/lib/systemd/system/vcpnode.service): the binary in /usr/bin.
func DefaultPackage() Unit {
	u := DefaultSystem()
	u.Binary = "/usr/bin/vcpnode"
	return u
}

// DefaultUser is the user unit's layout, in terms of the user's home (%h):
// what service/systemd/vcpnode-user.service shows.
func DefaultUser() Unit {
	return Unit{Binary: "%h/.local/bin/vcpnode", Config: "%h/.config/vcpnode/config.toml"}
}

// ErrBadPath means a path cannot be written into a unit.
var ErrBadPath = errors.New("path cannot be used in a systemd unit")

// System renders the system unit (/etc/systemd/system/vcpnode.service).
func System(u Unit) ([]byte, error) { return render("system", systemTemplate, u) }

// User renders the user unit (~/.config/systemd/user/vcpnode.service).
func User(u Unit) ([]byte, error) {
	u.KeyFile = ""
	return render("user", userTemplate, u)
}

// Sysusers is the sysusers.d(5) entry that creates the vcpnode system user.
func Sysusers() []byte { return bytes.Clone(sysusers) }

func render(name, text string, u Unit) ([]byte, error) {
	for _, p := range []struct{ what, path string }{{"binary", u.Binary}, {"config", u.Config}, {"key file", u.KeyFile}} {
		if p.path == "" && p.what == "key file" {
			continue
		}
		if err := checkPath(p.path); err != nil {
			return nil, fmt.Errorf("%s unit: %s %q: %w", name, p.what, p.path, err)
		}
	}
	fields := map[string]string{"Binary": u.Binary, "Config": u.Config, "KeyFile": u.KeyFile}
	funcs := map[string]func(string) string{"arg": execArg, "spec": escapeSpecifiers}
	out, err := servicetmpl.Expand(text, fields, funcs)
	if err != nil {
		return nil, fmt.Errorf("%s unit: %w", name, err)
	}
	return []byte(out), nil
}

// homePrefix is the specifier for the user's home, allowed at the start of
// a path so that the shipped user unit works for any user.
const homePrefix = "%h/"

func checkPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("%w: it is empty", ErrBadPath)
	case !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, homePrefix):
		return fmt.Errorf("%w: it must be absolute", ErrBadPath)
	case strings.ContainsAny(p, "\n\r\x00"):
		return fmt.Errorf("%w: it contains a line break or NUL", ErrBadPath)
	}
	return nil
}

// escapeSpecifiers makes p literal for systemd: % starts a specifier. A
// leading %h/ is kept as the specifier it is meant to be.
func escapeSpecifiers(p string) string {
	prefix := ""
	if strings.HasPrefix(p, homePrefix) {
		prefix, p = "%h", p[2:]
	}
	return prefix + strings.ReplaceAll(p, "%", "%%")
}

// execArg writes p as one argument of an Exec= command line: specifiers and
// $ escaped, quoted when it holds blanks, quotes or backslashes.
func execArg(p string) string {
	s := strings.ReplaceAll(escapeSpecifiers(p), "$", "$$")
	if !strings.ContainsAny(s, " \t\"'\\;") {
		return s
	}
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `"`, `\"`)
	return `"` + s + `"`
}

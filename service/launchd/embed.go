// Package launchd renders vcpnode's launchd property lists (macOS) from the
// templates kept beside this file, for `vcpnode service install`.
package launchd

import (
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vcpnode/vcpnode/service/internal/servicetmpl"
)

var (
	//go:embed vcpnode-agent.plist.tmpl
	agentTemplate string
	//go:embed vcpnode-daemon.plist.tmpl
	daemonTemplate string
)

// Label names the job in launchctl and the plist file (Label + ".plist").
const Label = "com.github.vcpnode"

// Job holds what a rendered plist refers to. launchd expands neither ~ nor
// variables, so every path must be absolute.
type Job struct {
	Label  string // empty means Label
	Binary string // the vcpnode executable
	Config string // the config file
	LogDir string // holds vcpnode.log (stdout and stderr); must exist before the job starts
	// WorkingDir is the LaunchDaemon's working directory; the agent runs in
	// the user's home and ignores it.
	WorkingDir string
}

// ErrBadPath means a path cannot be written into a plist.
var ErrBadPath = errors.New("path cannot be used in a launchd plist")

// Agent renders the per-user LaunchAgent (~/Library/LaunchAgents).
func Agent(j Job) ([]byte, error) {
	j.WorkingDir = ""
	return render("agent", agentTemplate, j)
}

// Daemon renders the system LaunchDaemon (/Library/LaunchDaemons).
func Daemon(j Job) ([]byte, error) { return render("daemon", daemonTemplate, j) }

func render(name, text string, j Job) ([]byte, error) {
	if j.Label == "" {
		j.Label = Label
	}
	paths := []struct{ what, path string }{{"binary", j.Binary}, {"config", j.Config}, {"log directory", j.LogDir}}
	if name == "daemon" {
		paths = append(paths, struct{ what, path string }{"working directory", j.WorkingDir})
	}
	for _, p := range paths {
		if err := checkPath(p.path); err != nil {
			return nil, fmt.Errorf("%s plist: %s %q: %w", name, p.what, p.path, err)
		}
	}
	if strings.ContainsFunc(j.Label, func(r rune) bool { return !isLabelRune(r) }) {
		return nil, fmt.Errorf("%s plist: label %q: use letters, digits, '.', '-' and '_' only", name, j.Label)
	}
	fields := map[string]string{"Label": j.Label, "Binary": j.Binary, "Config": j.Config, "LogDir": j.LogDir, "WorkingDir": j.WorkingDir}
	out, err := servicetmpl.Expand(text, fields, map[string]func(string) string{"xml": escapeXML})
	if err != nil {
		return nil, fmt.Errorf("%s plist: %w", name, err)
	}
	return []byte(out), nil
}

func checkPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("%w: it is empty", ErrBadPath)
	case !strings.HasPrefix(p, "/"):
		return fmt.Errorf("%w: it must be absolute (launchd does not expand ~)", ErrBadPath)
	case strings.ContainsFunc(p, unicode.IsControl):
		return fmt.Errorf("%w: it contains a control character", ErrBadPath)
	}
	return nil
}

func isLabelRune(r rune) bool {
	return r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune(".-_", r))
}

// escapeXML escapes s for XML character data exactly as encoding/xml's
// EscapeText does (TestEscapeXMLAgreesWithEncodingXML), without linking
// encoding/xml, whose initialiser would otherwise build its HTML entity
// table in every vcpnode process.
func escapeXML(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		r, width := utf8.DecodeRuneInString(s[i:])
		i += width
		var esc string
		switch r {
		case '"':
			esc = "&#34;"
		case '\'':
			esc = "&#39;"
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '\t':
			esc = "&#x9;"
		case '\n':
			esc = "&#xA;"
		case '\r':
			esc = "&#xD;"
		default:
			if !xmlChar(r) || r == utf8.RuneError && width == 1 {
				esc = "\uFFFD"
				break
			}
			continue
		}
		b.WriteString(s[last : i-width])
		b.WriteString(esc)
		last = i
	}
	b.WriteString(s[last:])
	return b.String()
}

// xmlChar reports whether r may appear in an XML document (the Char
// production of XML 1.0).
func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

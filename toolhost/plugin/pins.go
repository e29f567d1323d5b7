package plugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// PinsFile is the file of the state directory that keeps each plugin
// folder's first-seen identity.
const PinsFile = "plugin-identities.json"

// Pins keeps the identity each plugin folder was first seen with: its
// manifest's name, pluginType, entryPoint command and the folders its
// "sandbox" member declares. The owner's
// [tools.NAME] settings (sandbox, approval, exposure…) name a plugin, and
// a plugin can write its own folder: were its manifest's name believed at
// every scan, it could rename itself out of them. So a folder keeps its
// first name whatever its manifest says later, and every change is
// reported. So do the declared folders, which the sandbox grants it: a
// plugin rewriting them would grant itself any tree (/etc, ~/.bashrc).
// The owner gives a plugin a new identity by removing its entry from the
// file (then reloading), or by renaming its folder.
type Pins struct {
	path string

	mu   sync.Mutex
	pins map[string]Pin // by plugin folder
}

// Pin is one folder's first-seen identity.
type Pin struct {
	Name    string `json:"name"`
	Type    string `json:"pluginType"`
	Command string `json:"command,omitempty"`
	// Sandbox: nil in a pin kept before declared folders were.
	Sandbox *sandbox.Declared `json:"sandbox,omitempty"`
}

// OpenPins reads the pins kept in stateDir (none yet is fine).
func OpenPins(stateDir string) (*Pins, error) {
	p := &Pins{path: filepath.Join(stateDir, PinsFile), pins: map[string]Pin{}}
	data, err := os.ReadFile(p.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return p, nil
	case err != nil:
		return nil, fmt.Errorf("plugin identities: %w", err)
	}
	if err := json.Unmarshal(data, &p.pins); err != nil {
		return nil, fmt.Errorf("plugin identities: %s: %w", p.path, err)
	}
	return p, nil
}

// Path is the file the pins are kept in.
func (p *Pins) Path() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.path
}

// MoveTo keeps the pins in stateDir from now on (the state directory
// moved): they are written there, merged with the pins a file already
// there keeps of folders not pinned here (those in force win), so that
// the next start, reading stateDir, still knows every folder's first
// name. The old file stays as it was. On error nothing changes.
func (p *Pins) MoveTo(stateDir string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	there, err := OpenPins(stateDir)
	if err != nil {
		return err
	}
	merged := there.pins
	for folder, pin := range p.pins {
		merged[folder] = pin
	}
	moved := &Pins{path: there.path, pins: merged}
	if err := moved.save(); err != nil {
		return err
	}
	p.path, p.pins = moved.path, merged
	return nil
}

// apply gives m the name its folder was first seen with, pinning it if the
// folder is new, and returns a notice for each part of its identity that
// changed since.
func (p *Pins) apply(folder string, m *manifest) ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	declared := m.declared // the pin's own copy
	now := Pin{Name: m.name, Type: m.pluginType, Command: m.command, Sandbox: &declared}
	if m.direct {
		now.Command = m.script
	}
	was, ok := p.pins[folder]
	if !ok {
		p.pins[folder] = now
		return nil, p.save()
	}
	var notices []string
	switch {
	case was.Sandbox == nil: // pinned before declared folders were
		was.Sandbox = now.Sandbox
		p.pins[folder] = was
		if err := p.save(); err != nil {
			return nil, err
		}
	case !slices.Equal(now.Sandbox.Read, was.Sandbox.Read) || !slices.Equal(now.Sandbox.Write, was.Sandbox.Write):
		notices = append(notices, fmt.Sprintf("its manifest's \"sandbox\" folders changed from %s to %s since it was first seen: "+
			"it keeps the first (to take the new ones, remove its folder from %s and reload)", declaredText(*was.Sandbox), declaredText(*now.Sandbox), p.path))
		m.declared = *was.Sandbox
	}
	if now.Name != was.Name {
		notices = append(notices, fmt.Sprintf("its manifest now names it %q: it keeps the name %q it was first seen with, and the [tools.%s] settings "+
			"(to take the new name, remove its folder from %s and reload)", now.Name, was.Name, was.Name, p.path))
		m.name = was.Name
	}
	if now.Type != was.Type {
		notices = append(notices, fmt.Sprintf("its manifest's pluginType changed from %q to %q since it was first seen", was.Type, now.Type))
	}
	if now.Command != was.Command {
		notices = append(notices, fmt.Sprintf("its manifest's entryPoint changed from %q to %q since it was first seen", was.Command, now.Command))
	}
	return notices, nil
}

// save writes the pins whole (a new file renamed over the old one).
func (p *Pins) save() error {
	data, err := json.MarshalIndent(p.pins, "", "  ")
	if err != nil {
		return err
	}
	tmp := p.path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("plugin identities: %w", err)
	}
	if err := os.Rename(tmp, p.path); err != nil {
		return fmt.Errorf("plugin identities: %w", err)
	}
	return nil
}

// declaredText is declared folders as a manifest writes them.
func declaredText(d sandbox.Declared) string {
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Sprint(d)
	}
	return string(b)
}

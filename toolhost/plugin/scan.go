package plugin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vcpnode/vcpnode/toolhost"
)

// Set is the result of one scan of the plugin folders.
type Set struct {
	// Tools are the synchronous and asynchronous plugins, ready to register.
	Tools []toolhost.Tool
	// Static are the static plugins, for the placeholder refresher.
	Static []*StaticPlugin
	// Disabled are plugins whose manifest is renamed plugin-manifest.json.block.
	Disabled []Entry
	// Direct are the service and hybridservice plugins (direct protocol):
	// modules for a Node.js host, which the caller may or may not have.
	Direct []*DirectPlugin
	// Unsupported are valid plugins of a type vcpnode cannot run
	// (messagePreprocessor, a service without the direct protocol).
	Unsupported []Entry
	// Invalid are manifests that could not be used; Reason names the file and field.
	Invalid []Entry
	// Duplicates are plugins skipped because an earlier one has the same name.
	Duplicates []Entry
	// Notices are problems in hosted plugins that were worked around
	// (dropped invocationCommands entries, ignored fields, env lines…).
	Notices []Entry
	// Changed are plugins whose manifest changed their name, pluginType or
	// entryPoint since their folder was first seen (Pins); each is also a
	// notice.
	Changed []Entry

	async map[string]bool
}

// Entry is one plugin (or file) in a Set's lists.
type Entry struct {
	Name   string // the manifest's name, when it could be read
	Type   string // the manifest's pluginType, when it could be read
	Path   string // the manifest file
	Reason string
}

// IsAsync reports whether name is an asynchronous plugin of this set (the
// callback listener accepts callbacks only for those).
func (s *Set) IsAsync(name string) bool { return s.async[name] }

// Warnings returns one line per problem, for logs and reload reports.
// Disabled plugins are not problems and are not listed.
func (s *Set) Warnings() []string {
	var out []string
	for _, e := range s.Invalid {
		out = append(out, fmt.Sprintf("plugin skipped: %s", e.Reason))
	}
	for _, e := range s.Duplicates {
		out = append(out, fmt.Sprintf("plugin %q skipped: %s", e.Name, e.Reason))
	}
	for _, e := range s.Unsupported {
		out = append(out, fmt.Sprintf("plugin %q (%s) not hosted: %s", e.Name, e.Path, e.Reason))
	}
	for _, e := range s.Notices {
		if e.Name == "" {
			out = append(out, e.Reason)
			continue
		}
		out = append(out, fmt.Sprintf("plugin %q: %s", e.Name, e.Reason))
	}
	return out
}

// Scan reads every plugin folder under dirs: each dir holds folders with a
// plugin-manifest.json, visited in dir order, then folder-name order (the
// first of two plugins with the same name wins). A bad plugin is listed in
// the Set and never stops the others; Scan itself fails only when a dir or
// Options.EnvFile cannot be read.
func (h *Host) Scan(dirs []string) (*Set, error) {
	set := &Set{async: make(map[string]bool)}
	src := envSources{base: baseEnv(h.opts.Environ(), h.opts.PassEnv)}
	if h.opts.EnvFile != "" {
		global, err := readDotenv(h.opts.EnvFile, false)
		if err != nil {
			return nil, fmt.Errorf("plugins env_file %s: %w", h.opts.EnvFile, err)
		}
		src.global = global.values
		if s := global.skippedText(h.opts.EnvFile); s != "" {
			set.Notices = append(set.Notices, Entry{Path: h.opts.EnvFile, Reason: s})
		}
	}
	var errs []error
	winners := make(map[string]string) // name → manifest path
	for _, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err != nil {
			errs = append(errs, fmt.Errorf("plugin dir %s: %w", dir, err))
			continue
		}
		folders, err := os.ReadDir(abs)
		if err != nil {
			errs = append(errs, fmt.Errorf("plugin dir: %w", err))
			continue
		}
		if slices.ContainsFunc(folders, func(f os.DirEntry) bool { return f.Name() == manifestFile }) {
			// One plugin's folder where a folder of plugins belongs: it
			// would host nothing, without a word.
			set.Notices = append(set.Notices, Entry{Path: abs, Reason: fmt.Sprintf(
				"plugin dir %s holds a %s itself: it is one plugin's folder, and a plugin dir holds plugin folders; list its parent, %s, instead",
				abs, manifestFile, filepath.Dir(abs))})
		}
		for _, f := range folders { // os.ReadDir sorts by name
			if strings.HasPrefix(f.Name(), ".") {
				continue
			}
			h.scanFolder(set, src, abs, filepath.Join(abs, f.Name()), winners)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return set, nil
}

// scanFolder adds the plugin in folder (if any) to set.
func (h *Host) scanFolder(set *Set, src envSources, root, folder string, winners map[string]string) {
	if fi, err := os.Stat(folder); err != nil || !fi.IsDir() {
		return
	}
	path := filepath.Join(folder, manifestFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if blocked, err := os.ReadFile(path + blockedSuffix); err == nil {
			e := Entry{Path: path + blockedSuffix, Name: filepath.Base(folder)}
			if m, err := parseManifest(e.Path, blocked); m != nil {
				e.Name, e.Type = m.name, m.pluginType
			} else if err != nil {
				e.Reason = err.Error()
			}
			set.Disabled = append(set.Disabled, e)
		}
		return
	}
	if err != nil {
		set.Invalid = append(set.Invalid, Entry{Path: path, Reason: fmt.Sprintf("%s: %v", path, err)})
		return
	}
	m, err := parseManifest(path, data)
	if errors.Is(err, errUnsupported) {
		set.Unsupported = append(set.Unsupported, Entry{Name: m.name, Type: m.pluginType, Path: path, Reason: err.Error()})
		return
	}
	if err != nil {
		set.Invalid = append(set.Invalid, Entry{Path: path, Reason: err.Error()})
		return
	}
	if h.opts.Pins != nil {
		notices, err := h.opts.Pins.apply(folder, m)
		for _, n := range notices {
			set.Changed = append(set.Changed, Entry{Name: m.name, Type: m.pluginType, Path: path, Reason: n})
		}
		if err != nil {
			notices = append(notices, err.Error()+": its identity is kept until the daemon stops")
		}
		m.notices = append(m.notices, notices...)
	}
	if first, dup := winners[m.name]; dup {
		set.Duplicates = append(set.Duplicates, Entry{Name: m.name, Type: m.pluginType, Path: path,
			Reason: fmt.Sprintf("%s has the same name as %s, which is used", path, first)})
		return
	}
	conf, err := readDotenv(filepath.Join(folder, configEnvFile), true)
	if err != nil {
		set.Invalid = append(set.Invalid, Entry{Name: m.name, Type: m.pluginType, Path: path,
			Reason: fmt.Sprintf("%s: %v", filepath.Join(folder, configEnvFile), err)})
		return
	}
	winners[m.name] = path
	if s := conf.skippedText(filepath.Join(folder, configEnvFile)); s != "" {
		m.notices = append(m.notices, s)
	}
	// PROJECT_BASE_PATH is the parent of the Plugin dir: plugins reach
	// their siblings and the project's files through it.
	env, own, notes := pluginEnv(src, m, conf.values, filepath.Dir(root), h.opts.CallbackBaseURL)
	m.notices = append(m.notices, notes...)
	var l launch
	if !m.direct {
		var note string
		l, note = planLaunch(m.command, folder, envValue(env, "PATH"))
		if note != "" {
			m.notices = append(m.notices, note)
		}
	}
	if m.pluginType == typeAsynchronous && !ValidCallbackName(m.name) {
		// The server's {{VCP_ASYNC_RESULT::…}} placeholder cannot name it
		// either, so its results could never reach the model.
		m.notices = append(m.notices, fmt.Sprintf("name %q has characters outside A-Z a-z 0-9 _ . -: "+
			"its callbacks will be refused; the call itself still works", m.name))
	}
	for _, n := range m.notices {
		set.Notices = append(set.Notices, Entry{Name: m.name, Type: m.pluginType, Path: path, Reason: n})
	}
	if m.direct {
		d := newDirectPlugin(m, folder, env, src, conf.values, filepath.Dir(root))
		d.Own = own
		set.Direct = append(set.Direct, d)
		return
	}
	spec := &runSpec{name: m.name, dir: folder, launch: l, env: env, async: m.pluginType == typeAsynchronous, declared: &m.declared, own: own}
	switch m.pluginType {
	case typeStatic:
		set.Static = append(set.Static, newStaticPlugin(h, m, spec))
	case typeAsynchronous:
		set.async[m.name] = true
		set.Tools = append(set.Tools, newTool(h, m, spec))
	default:
		set.Tools = append(set.Tools, newTool(h, m, spec))
	}
}

package toolhost

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Errors returned by Registry.Add and Registry.Replace.
var (
	// ErrInvalidTool: the tool is nil or its spec has no usable name.
	ErrInvalidTool = errors.New("invalid tool")
	// ErrDuplicateTool: another registered tool already has the same name.
	ErrDuplicateTool = errors.New("duplicate tool name")
)

// Registry holds the tools this node can run, by name. It is safe for
// concurrent use; Replace swaps the whole set atomically (for reload).
type Registry struct {
	mu    sync.RWMutex
	tools map[string]registered
}

// registered keeps the spec read at registration: Spec must not change while
// a tool is registered, and reading it once keeps lookups cheap.
type registered struct {
	tool Tool
	spec Spec
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{tools: make(map[string]registered)}
}

// Add registers t. It fails with ErrInvalidTool for a nil tool or an empty
// name and with ErrDuplicateTool when the name is taken.
func (r *Registry) Add(t Tool) error {
	e, err := checkTool(t)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.tools[e.spec.Name]; ok {
		return duplicateError(e.spec, old.spec)
	}
	r.tools[e.spec.Name] = e
	return nil
}

// Replace swaps the registered set for tools in one step. The tools are
// checked first; on any error the registry is left unchanged. Calls already
// running keep the Tool they started with.
func (r *Registry) Replace(tools []Tool) error {
	next := make(map[string]registered, len(tools))
	var errs []error
	for _, t := range tools {
		e, err := checkTool(t)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if old, ok := next[e.spec.Name]; ok {
			errs = append(errs, duplicateError(e.spec, old.spec))
			continue
		}
		next[e.spec.Name] = e
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	r.mu.Lock()
	r.tools = next
	r.mu.Unlock()
	return nil
}

// Get returns the tool registered under name (case-sensitive, like the server).
func (r *Registry) Get(name string) (Tool, bool) {
	e, ok := r.lookup(name)
	return e.tool, ok
}

// lookup returns the tool and the spec cached at registration.
func (r *Registry) lookup(name string) (registered, bool) {
	r.mu.RLock()
	e, ok := r.tools[name]
	r.mu.RUnlock()
	return e, ok
}

// resolve finds the tool a call names: by its name; else by an alias
// (Spec.Aliases); else, as AIO Hub routes {toolId}_{methodName}
// (UnitConverter_ListUnits), a multi-command tool named by the part before
// an underscore with a command named by the part after it, which is
// returned as command.
func (r *Registry) resolve(name string) (e registered, command string, ok bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if e, ok := r.tools[name]; ok {
		return e, "", true
	}
	for _, e := range r.tools {
		if slices.Contains(e.spec.Aliases, name) {
			return e, "", true
		}
	}
	for i := strings.IndexByte(name, '_'); i > 0; {
		if e, ok := r.tools[name[:i]]; ok && multiCommand(e.spec) {
			for _, c := range e.spec.Commands {
				if c.Command == name[i+1:] {
					return e, c.Command, true
				}
			}
		}
		j := strings.IndexByte(name[i+1:], '_')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return registered{}, "", false
}

// List returns every registered tool, sorted by name.
func (r *Registry) List() []Tool {
	entries := r.entries()
	out := make([]Tool, len(entries))
	for i, e := range entries {
		out[i] = e.tool
	}
	return out
}

// Len reports how many tools are registered.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.tools)
}

// entries returns the registered tools with their specs, sorted by name.
func (r *Registry) entries() []registered {
	r.mu.RLock()
	out := make([]registered, 0, len(r.tools))
	for _, e := range r.tools {
		out = append(out, e)
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b registered) int { return strings.Compare(a.spec.Name, b.spec.Name) })
	return out
}

func checkTool(t Tool) (registered, error) {
	if t == nil {
		return registered{}, fmt.Errorf("%w: nil tool", ErrInvalidTool)
	}
	s := t.Spec()
	if strings.TrimSpace(s.Name) == "" {
		return registered{}, fmt.Errorf("%w: tool from %s has an empty name", ErrInvalidTool, sourceOf(s))
	}
	if strings.TrimSpace(s.Name) != s.Name {
		return registered{}, fmt.Errorf("%w: tool name %q from %s has leading or trailing spaces; the server matches names exactly",
			ErrInvalidTool, s.Name, sourceOf(s))
	}
	return registered{tool: t, spec: s}, nil
}

func duplicateError(s, first Spec) error {
	return fmt.Errorf("%w: %q from %s is already registered from %s; rename one of them",
		ErrDuplicateTool, s.Name, sourceOf(s), sourceOf(first))
}

func sourceOf(s Spec) string {
	if s.Source == "" {
		return "an unnamed source"
	}
	return s.Source
}

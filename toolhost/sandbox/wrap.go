package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Wrap returns how to start c under its profile. A nil Sandbox and the
// profile "none" start c unchanged. The Run must be closed once every
// process of the command's tree has ended (it removes the per-call
// temporary directory and limit groups).
func (s *Sandbox) Wrap(c Command) (*Run, error) {
	r := &Run{Path: c.Path, Args: c.Args, Env: c.Env, Profile: None, tool: c.Tool, kind: c.Kind, dir: c.Dir}
	if r.kind == "" {
		r.kind = "tool"
	}
	if s == nil {
		return r, nil
	}
	o := s.opts.Load()
	name := c.Profile
	if name == "" {
		name = s.ProfileFor(c.Tool)
	}
	p, ok := o.Profiles[name]
	if !ok {
		return nil, fmt.Errorf("%s %q: %w %q", r.kind, c.Tool, ErrUnknownProfile, name)
	}
	r.Profile = name
	r.home, r.protected, r.onRefusal = o.Home, o.Protected, o.OnRefusal
	if p.Off {
		return r, nil
	}
	r.limits = p
	if err := s.confine(o, p, c, r); err != nil {
		r.Close()
		return nil, fmt.Errorf("%s %q: sandbox profile %q: %w", r.kind, c.Tool, name, err)
	}
	return r, nil
}

// grants are the paths a command of profile p may use: the profile's own
// (carved once per profile and configuration, they rarely change) and the
// command's folder, program, other files it reads and temporary directory,
// and what it needs for what it runs (derived).
func (o *Options) grants(p Profile, c Command, tmp string) []Grant {
	static, ok := o.carved.Load(p.Name)
	if !ok {
		var gs []Grant
		for _, path := range p.Read {
			gs = append(gs, Grant{Path: expandHome(path, o.Home)})
		}
		for _, path := range o.FileRoots {
			gs = append(gs, Grant{Path: expandHome(path, o.Home)})
		}
		for _, path := range p.Write {
			gs = append(gs, Grant{Path: expandHome(path, o.Home), Write: true})
		}
		static, _ = o.carved.LoadOrStore(p.Name, carve(nonEmpty(gs), o.Protected))
	}
	var own []Grant
	if filepath.IsAbs(c.Path) {
		own = append(own, Grant{Path: c.Path}) // the program itself, wherever it is
	}
	for _, path := range c.Read {
		own = append(own, Grant{Path: path})
	}
	if c.Dir != "" {
		own = append(own, Grant{Path: c.Dir, Write: true})
	}
	if tmp != "" {
		own = append(own, Grant{Path: tmp, Write: true})
	}
	gs := append(slices.Clone(static.([]Grant)), carve(own, o.Protected)...)
	derived := o.derivedCached(c)
	if o.lastDerived != nil {
		o.lastDerived.Store(derivedKey(c), derived)
	}
	return append(gs, derived...)
}

func nonEmpty(gs []Grant) []Grant {
	out := gs[:0]
	for _, g := range gs {
		if g.Path != "" {
			out = append(out, g)
		}
	}
	return out
}

// withTemp is env with the temporary directory variables pointing at dir.
func withTemp(env []string, dir string) []string {
	out := make([]string, 0, len(env)+3)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k != "TMPDIR" && k != "TMP" && k != "TEMP" {
			out = append(out, kv)
		}
	}
	return append(out, "TMPDIR="+dir, "TMP="+dir, "TEMP="+dir)
}

// ErrLimit: the run's process tree reached a limit of its profile.
var ErrLimit = errors.New("reached a limit of its sandbox profile")

// Explain turns the error of a finished run into one that says what the
// profile caused: a limit the run reached (an error even when err is nil:
// its tree was cut short; where rlimits hold it, from the failure's words:
// rlimitHits), or what the profile refused — a path or a port
// found in outputs (the run's stderr and stdout) or in err and checked
// against the run's grants — with the configuration that grants it (a
// *RefusedError). Any other error is returned unchanged: the sandbox did
// not cause it. An unconfined run's error is unchanged.
func (r *Run) Explain(err error, outputs ...[]byte) error {
	if r == nil || r.Profile == None || r.limits.Off || errors.Is(err, ErrLimitNotApplied) {
		return err
	}
	if hit := r.limitsHit(); len(hit) > 0 {
		lim := fmt.Errorf("%s %q %w (profile %q): %s", r.kind, r.tool, ErrLimit, r.Profile, strings.Join(hit, "; "))
		if err == nil {
			return lim
		}
		return fmt.Errorf("%w; %w", lim, err)
	}
	if err == nil {
		return nil
	}
	if hit := r.rlimitHits(err, outputs); len(hit) > 0 {
		return fmt.Errorf("%s %q %w (profile %q): %s; %w", r.kind, r.tool, ErrLimit, r.Profile, strings.Join(hit, "; "), err)
	}
	// An error's text joins the lines of a run's stderr with " | "
	// (toolhost's summary): each is a line of its own.
	refused := r.refusals(append(outputs, []byte(strings.ReplaceAll(err.Error(), " | ", "\n"))))
	if len(refused) == 0 {
		return err
	}
	if r.onRefusal != nil {
		r.onRefusal(r.kind, r.tool, refused)
	}
	return &RefusedError{Kind: r.kind, Tool: r.tool, Profile: r.Profile, Refusals: refused, Fix: r.fix(refused), Err: err}
}

// Exceeded reports whether the run's tree reached one of its limits; what
// is left of such a tree should be stopped (a fork loop never ends).
func (r *Run) Exceeded() bool { return r != nil && len(r.limitsHit()) > 0 }

// Close removes the per-call temporary directory and the run's limit
// groups; call it once the command's whole process tree has ended.
func (r *Run) Close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.groups != nil {
		r.seenV1 = r.groups.events()
		r.groups.remove()
		r.groups = nil
	}
	if r.treeDir != "" {
		r.seenV2, r.treeDir = treeEvents(r.treeDir, r.limits), ""
	}
	if r.tmp != "" {
		removeTemp(r.tmp)
		r.tmp = ""
	}
	r.launchers.refill()
}

// limitsHit names the limits the run reached: from its limit groups and
// its tree's cgroup while they exist, else from what was read before they
// went (Close, the tree's release).
func (r *Run) limitsHit() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	v1, v2 := r.seenV1, r.seenV2
	if r.groups != nil {
		v1 = r.groups.events()
	}
	if r.treeDir != "" {
		v2 = treeEvents(r.treeDir, r.limits)
	}
	return v1.plus(v2).names(r.limits)
}

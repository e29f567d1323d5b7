package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Grant is one tree (or file) a confined process may use.
type Grant struct {
	Path  string `json:"p"`
	Write bool   `json:"w,omitempty"`
	// From says why a grant derived from what the tool runs is there
	// (FromScript, FromNodeModules…); "" for the profile's own.
	From string `json:"from,omitempty"`
}

// expandHome replaces a leading ~ with home ("" home: the path is dropped).
func expandHome(path, home string) string {
	if path != "~" && !strings.HasPrefix(path, "~/") {
		return filepath.Clean(path)
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, strings.TrimPrefix(path, "~"))
}

// canonical is path with symlinks resolved where it exists.
func canonical(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return filepath.Clean(path)
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	if dir == "/" {
		return true
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// carve removes the protected paths from grants. Landlock only allows, so
// a granted tree that holds a protected path is replaced by its entries,
// one by one, but for the one leading to the protected path, which is
// carved the same way; a grant inside a protected path is dropped. Missing
// paths are dropped (Landlock needs an open file for each rule).
func carve(grants []Grant, protected []string) []Grant {
	return carveReal(grants, canonicalAll(protected))
}

// canonicalAll is paths with symlinks resolved, the empty ones dropped.
func canonicalAll(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if p != "" {
			out = append(out, canonical(p))
		}
	}
	return out
}

// carveReal is carve with the protected paths already canonical; the
// grants it returns are canonical too (what the launcher's /run cover
// compares without resolving them again).
func carveReal(grants []Grant, prot []string) []Grant {
	var out []Grant
	var add func(g Grant, depth int)
	add = func(g Grant, depth int) {
		real := canonical(g.Path)
		if _, err := os.Stat(real); err != nil {
			return
		}
		var inside []string
		for _, p := range prot {
			if within(real, p) {
				return // the grant is protected itself
			}
			if within(p, real) {
				inside = append(inside, p)
			}
		}
		if len(inside) == 0 || depth > 32 {
			if len(inside) == 0 {
				out = append(out, Grant{Path: real, Write: g.Write, From: g.From})
			}
			return
		}
		entries, err := os.ReadDir(real)
		if err != nil {
			return
		}
		for _, e := range entries {
			add(Grant{Path: filepath.Join(real, e.Name()), Write: g.Write, From: g.From}, depth+1)
		}
	}
	for _, g := range grants {
		add(g, 0)
	}
	// A path granted both ways keeps the write grant only.
	slices.SortStableFunc(out, func(a, b Grant) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		if a.Write == b.Write {
			return 0
		}
		if a.Write {
			return -1
		}
		return 1
	})
	return slices.CompactFunc(out, func(a, b Grant) bool { return a.Path == b.Path })
}

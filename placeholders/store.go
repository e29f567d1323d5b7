// Package placeholders keeps the {{Name}} values this node feeds the
// server's system prompts: a Store of current values with a version, so the
// node can push a full snapshot after connecting and only changes after that.
package placeholders

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
)

// namePattern is what the server's prompt substitution can match inside {{…}}.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]+$`)

// ErrBadKey is returned for a key that cannot be a placeholder name.
var ErrBadKey = errors.New("invalid placeholder key")

// NormalizeKey turns "Name" or "{{Name}}" into "{{Name}}", the form the
// official node sends; the server treats the two forms as separate entries,
// so a node must always use one.
func NormalizeKey(key string) (string, error) {
	name := strings.TrimSpace(key)
	if strings.HasPrefix(name, "{{") && strings.HasSuffix(name, "}}") && len(name) >= 4 {
		name = name[2 : len(name)-2]
	}
	if !namePattern.MatchString(name) {
		return "", fmt.Errorf("%w %q: use letters, digits and _ . : - (braces optional)", ErrBadKey, key)
	}
	return "{{" + name + "}}", nil
}

// Entry is one placeholder's current state.
type Entry struct {
	Key       string // normalised, "{{Name}}"
	Value     string
	Source    string
	UpdatedAt time.Time
	Version   uint64 // store version at the last change of Value
}

// Store holds the current values. Safe for concurrent use.
type Store struct {
	mu      sync.Mutex
	version uint64
	entries map[string]Entry
	changed chan struct{} // closed and replaced on every change
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{entries: map[string]Entry{}, changed: make(chan struct{})}
}

// Set records a value. Setting the same value again is not a change.
func (s *Store) Set(key, value, source string) error {
	k, err := NormalizeKey(key)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.entries[k]; ok && old.Value == value && old.Source == source {
		return nil
	}
	s.version++
	s.entries[k] = Entry{Key: k, Value: value, Source: source, UpdatedAt: time.Now(), Version: s.version}
	close(s.changed)
	s.changed = make(chan struct{})
	return nil
}

// Snapshot returns every value and the version it reflects.
func (s *Store) Snapshot() (map[string]string, uint64) {
	return s.Since(0)
}

// Since returns the values changed after version v, and the current version.
func (s *Store) Since(v uint64) (map[string]string, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for k, e := range s.entries {
		if e.Version > v {
			out[k] = e.Value
		}
	}
	return out, s.version
}

// Changed returns a channel closed at the next change.
func (s *Store) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// Entries lists every entry, for status output.
func (s *Store) Entries() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Entry, 0, len(s.entries))
	for _, e := range s.entries {
		out = append(out, e)
	}
	return out
}

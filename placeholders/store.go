// Package placeholders keeps the {{Name}} values this node feeds the
// server's system prompts: a Store of current values with a version, so the
// node can push a full snapshot after connecting and only changes after that,
// and a Refresher that runs the sources of those values on their schedules.
package placeholders

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
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

// ClaimError reports a key that two sources want to feed. Only one source
// may own a key: the server keeps whichever value came last, so two owners
// would make the prompt flip between them.
type ClaimError struct {
	Key      string // normalised
	Holder   string // the source that owns the key
	Claimant string // the source that was refused
}

func (e *ClaimError) Error() string {
	return fmt.Sprintf("placeholder %s is fed by both %s and %s: remove or rename one of them", e.Key, e.Holder, e.Claimant)
}

// Entry is one placeholder's current state.
type Entry struct {
	Key       string // normalised, "{{Name}}"
	Value     string // the last good value; empty until HasValue
	HasValue  bool   // false until the source first produced a value
	Source    string
	UpdatedAt time.Time // last time the source produced a value (changed or not)
	Version   uint64    // store version at the last change of Value
	LastError string    // the latest failure, cleared by the next good value
	ErrorAt   time.Time
}

// Store holds the current values and who owns each key. Safe for
// concurrent use.
type Store struct {
	mu      sync.Mutex
	now     func() time.Time
	version uint64
	entries map[string]Entry
	changed chan struct{} // closed and replaced on every value change
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{now: time.Now, entries: map[string]Entry{}, changed: make(chan struct{})}
}

// Claim makes source the owner of key and returns the normalised key.
// Claiming a key one already owns is not an error.
func (s *Store) Claim(key, source string) (string, error) {
	k, err := NormalizeKey(key)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.claimLocked(k, source); err != nil {
		return "", err
	}
	return k, nil
}

// claimLocked returns k's entry, creating it for source if nobody owns k.
func (s *Store) claimLocked(k, source string) (Entry, error) {
	e, ok := s.entries[k]
	if !ok {
		e = Entry{Key: k, Source: source}
		s.entries[k] = e
	}
	if e.Source != source {
		return Entry{}, &ClaimError{Key: k, Holder: e.Source, Claimant: source}
	}
	return e, nil
}

// SetClaims replaces the whole ownership table with claims (normalised key
// → source) in one step, as a reload does. A key that changes owner keeps
// its value until the new owner produces one. It returns the keys that had
// a value and are no longer claimed: the server cannot forget them while
// connected.
func (s *Store) SetClaims(claims map[string]string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var removed []string
	for k, e := range s.entries {
		if _, ok := claims[k]; !ok {
			delete(s.entries, k)
			if e.HasValue {
				removed = append(removed, k)
			}
		}
	}
	for k, src := range claims {
		e, ok := s.entries[k]
		if !ok {
			e = Entry{Key: k}
		}
		e.Source = src
		s.entries[k] = e
	}
	slices.Sort(removed)
	return removed
}

// Remove forgets key and its owner. It reports whether the key had a value,
// which the server still holds until this node reconnects.
func (s *Store) Remove(key string) bool {
	k, err := NormalizeKey(key)
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[k]
	delete(s.entries, k)
	return ok && e.HasValue
}

// Set records a good value from source, claiming the key if nobody owns it.
// Setting the same value again refreshes UpdatedAt but is not a change.
func (s *Store) Set(key, value, source string) error {
	k, err := NormalizeKey(key)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.claimLocked(k, source)
	if err != nil {
		return err
	}
	e.UpdatedAt = s.now()
	e.LastError, e.ErrorAt = "", time.Time{}
	if e.HasValue && e.Value == value {
		s.entries[k] = e
		return nil
	}
	s.version++
	e.Value, e.HasValue, e.Version = value, true, s.version
	s.entries[k] = e
	close(s.changed)
	s.changed = make(chan struct{})
	return nil
}

// Fail records that source could not refresh key. The last good value stays
// and keeps being served: a stale value reads better in a prompt than an
// error message.
func (s *Store) Fail(key, source string, cause error) error {
	k, err := NormalizeKey(key)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.claimLocked(k, source)
	if err != nil {
		return err
	}
	e.LastError, e.ErrorAt = cause.Error(), s.now()
	s.entries[k] = e
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
		if e.HasValue && e.Version > v {
			out[k] = e.Value
		}
	}
	return out, s.version
}

// Changed returns a channel closed at the next value change.
func (s *Store) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// Entry returns the state of one key.
func (s *Store) Entry(key string) (Entry, bool) {
	k, err := NormalizeKey(key)
	if err != nil {
		return Entry{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[k]
	return e, ok
}

// Entries lists every claimed key sorted by key, for status output.
func (s *Store) Entries() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Entry, 0, len(s.entries))
	for _, k := range slices.Sorted(maps.Keys(s.entries)) {
		out = append(out, s.entries[k])
	}
	return out
}

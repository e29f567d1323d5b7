package hubconn

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/vcpnode/vcpnode/config"
)

// The ways that worked, kept in a file so that a restart does not spend a
// dropped key-less handshake again on a server that takes only the path
// key. The file holds endpoints without their key and the way each took;
// never the key.

// waysMu orders the rewrites of the file by the process's connections.
var waysMu sync.Mutex

// maxWays bounds the endpoints kept: a daemon has one per connection
// (the node's, each observer channel's); past it the longest unwritten go.
const maxWays = 16

// waysFile is the file's content.
type waysFile struct {
	// Ways is the way ("header" or "path") by key-less endpoint URL.
	Ways map[string]string `json:"ways"`
	// Recent are Ways' endpoints, the last written first.
	Recent []string `json:"recent,omitempty"`
}

// first is the way to try first for endpoint: the one that worked last in
// this process, else the one File remembers, else "".
func (r *Remembered) first(endpoint string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.way != "" && r.endpoint == endpoint {
		return r.way
	}
	if r.File == "" {
		return ""
	}
	f, err := readWays(r.File)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.saveErrorLocked(err)
	}
	return f.Ways[endpoint]
}

// worked notes that way took endpoint; atFirst, that it was the first
// way tried. File is rewritten when its entry changes.
func (r *Remembered) worked(endpoint, way string, atFirst bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fresh := r.endpoint != endpoint || r.way == ""
	if fresh {
		// The first connection of this process (or to this endpoint): the
		// way came from the file when it worked at the first try and the
		// file holds it.
		r.recalled = false
		if atFirst && r.File != "" {
			if f, err := readWays(r.File); err == nil && f.Ways[endpoint] == way {
				r.recalled = true
			}
		}
	} else if r.way != way {
		r.recalled = false // the remembered way stopped working: learned anew
	}
	r.way, r.endpoint = way, endpoint
	r.saveLocked()
}

// SetFile makes path the file the way is kept in from now on ("": in
// memory only), as when a reload moves the state directory. The way known
// now is written there at once, so that the next start finds it even if
// no connection is made before.
func (r *Remembered) SetFile(path string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.File == path {
		return
	}
	r.File = path
	if r.way != "" {
		r.saveLocked()
	}
}

// saveLocked writes the way of r.endpoint into File when its entry differs.
func (r *Remembered) saveLocked() {
	if r.File == "" {
		return
	}
	endpoint, way := r.endpoint, r.way
	// The node's connection and its observer channels share the file.
	waysMu.Lock()
	defer waysMu.Unlock()
	f, err := readWays(r.File)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.saveErrorLocked(err)
		f = waysFile{} // unreadable: replaced by what is known now
	}
	if f.Ways[endpoint] == way {
		return
	}
	if f.Ways == nil {
		f.Ways = map[string]string{}
	}
	f.Ways[endpoint] = way
	f.keepRecent(endpoint)
	data, err := json.MarshalIndent(f, "", "  ")
	if err == nil {
		err = os.MkdirAll(filepath.Dir(r.File), 0o700)
	}
	if err == nil {
		err = config.WriteFileAtomic(r.File, append(data, '\n'), 0o600)
	}
	if err != nil {
		r.saveErrorLocked(err)
	}
}

// keepRecent puts endpoint first in Recent and keeps maxWays endpoints.
func (f *waysFile) keepRecent(endpoint string) {
	recent := []string{endpoint}
	for _, ep := range f.Recent {
		if _, ok := f.Ways[ep]; ok && !slices.Contains(recent, ep) {
			recent = append(recent, ep)
		}
	}
	for _, ep := range slices.Sorted(maps.Keys(f.Ways)) { // written before Recent was
		if !slices.Contains(recent, ep) {
			recent = append(recent, ep)
		}
	}
	if len(recent) > maxWays {
		for _, ep := range recent[maxWays:] {
			delete(f.Ways, ep)
		}
		recent = recent[:maxWays]
	}
	f.Recent = recent
}

func (r *Remembered) saveErrorLocked(err error) {
	if r.OnSaveError != nil {
		r.OnSaveError(err)
	}
}

// readWays reads path; a missing file is fs.ErrNotExist, a file that is
// not ours an error that names it.
func readWays(path string) (waysFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return waysFile{}, err
	}
	var f waysFile
	if err := json.Unmarshal(data, &f); err != nil {
		return waysFile{}, fmt.Errorf("%s: not a file of remembered hub auth ways: %w", path, err)
	}
	for ep, way := range f.Ways {
		if !slices.Contains([]string{AuthHeader, AuthPath}, way) {
			delete(f.Ways, ep)
		}
	}
	return f, nil
}

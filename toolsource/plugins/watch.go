package plugins

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// pluginWatchDebounce gathers the burst of events an editor or an unpacked
// plugin makes into one rescan.
const pluginWatchDebounce = 500 * time.Millisecond

// Files inside a plugin folder whose change can change the plugin set.
var pluginWatchFiles = map[string]bool{
	"plugin-manifest.json":       true,
	"plugin-manifest.json.block": true,
	"config.env":                 true,
}

// Watch calls rescan (a reload with the config in force, which
// reconnects if the tools the server sees changed and keeps the previous
// set if the new one cannot be built) when a plugin folder appears or
// goes, or a manifest or config.env changes, in the folders of the last
// scan while [plugins] watch is on. It returns when ctx ends.
func (rt *Source) Watch(ctx context.Context, rescan func()) {
	w := &folderWatch{rt: rt, roots: map[string]bool{}, watched: map[string]bool{}}
	defer w.close()

	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	defer debounce.Stop()
	w.sync(false)
	for {
		select {
		case <-ctx.Done():
			return
		case <-rt.rescanned:
			if w.sync(true) {
				// A folder appeared between the scan and its watch: what was
				// written into it meanwhile must not be missed.
				debounce.Reset(pluginWatchDebounce)
			}
		case ev := <-w.events():
			if w.relevant(ev) {
				rt.log.Debug().Str("path", ev.Name).Str("op", ev.Op.String()).Msg("plugin folder changed")
				debounce.Reset(pluginWatchDebounce)
			}
		case err := <-w.errors():
			rt.log.Warn().Err(err).Msg("watching the plugin folders")
		case <-debounce.C:
			rescan()
		}
	}
}

// folderWatch keeps an fsnotify watch on each plugin dir and each folder in
// it (fsnotify is not recursive). The watcher is made on first use, so a
// node without plugins holds no inotify instance.
type folderWatch struct {
	rt      *Source
	fs      *fsnotify.Watcher
	roots   map[string]bool // the plugin dirs
	watched map[string]bool // roots and plugin folders under watch
}

func (w *folderWatch) events() <-chan fsnotify.Event {
	if w.fs == nil {
		return nil
	}
	return w.fs.Events
}

func (w *folderWatch) errors() <-chan error {
	if w.fs == nil {
		return nil
	}
	return w.fs.Errors
}

func (w *folderWatch) close() {
	if w.fs != nil {
		w.fs.Close()
	}
}

// sync makes the watch list match the plugin dirs now on disk. It reports
// whether a folder was added after the first sync (afterScan).
func (w *folderWatch) sync(afterScan bool) (added bool) {
	log := w.rt.log
	want := map[string]bool{}
	roots := map[string]bool{}
	for _, dir := range w.rt.watchTargets() {
		dir = filepath.Clean(dir)
		roots[dir] = true
		want[dir] = true
		entries, err := os.ReadDir(dir)
		if err != nil {
			log.Warn().Err(err).Str("dir", dir).Msg("cannot watch a plugin directory")
			continue
		}
		for _, e := range entries {
			if e.IsDir() {
				want[filepath.Join(dir, e.Name())] = true
			}
		}
	}
	w.roots = roots
	if len(want) > 0 && w.fs == nil {
		fs, err := fsnotify.NewWatcher()
		if err != nil {
			log.Warn().Err(err).Msg("cannot watch the plugin folders; use `vcpnode reload` or SIGHUP after changing them")
			return false
		}
		w.fs = fs
	}
	for path := range w.watched {
		if !want[path] {
			_ = w.fs.Remove(path) // fails harmlessly if the folder is already gone
			delete(w.watched, path)
		}
	}
	for path := range want {
		if w.watched[path] {
			continue
		}
		if err := w.fs.Add(path); err != nil {
			log.Warn().Err(err).Str("dir", path).Msg("cannot watch a plugin folder")
			continue
		}
		w.watched[path] = true
		added = added || (afterScan && !roots[path])
	}
	if len(want) > 0 {
		log.Debug().Int("folders", len(w.watched)).Msg("watching the plugin folders for changes")
	}
	return added
}

// relevant says whether ev can change the plugin set: a folder or file
// appearing or going in a plugin dir, or a manifest or config.env changing
// in a plugin folder. Edits to a stdio plugin's own scripts need no rescan
// (each run starts afresh); a direct plugin's top-level .js files do (its
// module stays loaded).
func (w *folderWatch) relevant(ev fsnotify.Event) bool {
	if ev.Op == fsnotify.Chmod {
		return false
	}
	if w.roots[filepath.Dir(ev.Name)] {
		return true
	}
	return pluginWatchFiles[filepath.Base(ev.Name)] || w.rt.isDirectScript(ev.Name)
}

package config

import "strings"

// Partial is what a config file with problems still tells, so that a
// check can go on past them and report everything in one run.
type Partial struct {
	// Config is the file decoded over Default. A setting with a wrong type
	// keeps its default; one with a wrong value holds that value.
	Config Config
	// Unread says why nothing of the file could be decoded (it does not
	// parse, or has too many wrong types); Config is then Default. "" when
	// Config holds the file.
	Unread    string
	bad       []string // keys of the problems with a known setting
	positions positionIndex
}

// Problem is message about the setting at the TOML path key (its parts
// unquoted), placed where the file writes it: for what a check beyond
// the file finds, such as a warning about a setting.
func (p Partial) Problem(message string, key ...string) Problem {
	path := keyPath(key...)
	line, col := p.positions.find(path)
	return Problem{Line: line, Column: col, Key: path, Message: message}
}

// Lost names the problem that makes the value at key (a TOML path like
// "hub.key_file" or "plugins.dirs") not the file's: one at the key or at a
// table holding it. "" when there is none; an unknown key elsewhere in the
// file makes no value lost, since nothing was read from it.
func (p Partial) Lost(key string) string {
	for _, b := range p.bad {
		if b == key || within(key, b) {
			return b
		}
	}
	return ""
}

// Bad is Lost, or a problem inside the value at key: a list's element
// ("plugins.dirs[1]"), a table's setting.
func (p Partial) Bad(key string) string {
	if b := p.Lost(key); b != "" {
		return b
	}
	for _, b := range p.bad {
		if within(b, key) {
			return b
		}
	}
	return ""
}

// within says whether the TOML path inner lies inside outer.
func within(inner, outer string) bool {
	rest, ok := strings.CutPrefix(inner, outer)
	return ok && outer != "" && (strings.HasPrefix(rest, ".") || strings.HasPrefix(rest, "["))
}

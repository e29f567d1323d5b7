package config

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/vcpnode/vcpnode/internal/humantext"
)

// Error lists every problem found in a configuration.
type Error struct {
	File     string // may be empty
	Problems []Problem
}

// Problem is one thing wrong with a configuration. Line and Column are
// 1-based and zero when unknown; Key is the TOML path, like "hub.url" or
// "node.hidden_tools[2]". The message never contains the key.
type Problem struct {
	Line, Column int
	Key, Message string
}

// Error lists the problems one per line as "file:line:col: key: message".
func (e *Error) Error() string {
	if len(e.Problems) == 0 {
		return e.File + ": invalid config"
	}
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.format(e.File)
	}
	return strings.Join(lines, "\n")
}

func (p Problem) format(file string) string {
	var b strings.Builder
	loc := file
	if p.Line > 0 {
		if loc != "" {
			loc += ":"
		}
		loc += fmt.Sprintf("%d:%d", p.Line, p.Column)
	}
	if loc != "" {
		b.WriteString(loc + ": ")
	}
	if p.Key != "" {
		b.WriteString(p.Key + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// In is the problem as "file:line:col: key: message".
func (p Problem) In(file string) string { return p.format(file) }

// String is the problem without a file name.
func (p Problem) String() string { return p.format("") }

// sortProblems orders problems by position; those without one keep their
// order and go last.
func sortProblems(ps []Problem) {
	slices.SortStableFunc(ps, func(a, b Problem) int {
		switch {
		case a.Line == 0 || b.Line == 0:
			return boolCmp(a.Line == 0, b.Line == 0)
		case a.Line != b.Line:
			return a.Line - b.Line
		}
		return a.Column - b.Column
	})
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// decodeProblems turns go-toml's error into problems. fatal means the
// document was not fully decoded (syntax or type error); badKey is the key
// of a type error, which Parse sets aside to decode the rest.
func decodeProblems(err error) (ps []Problem, badKey []string, fatal bool) {
	if err == nil {
		return nil, nil, false
	}
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		for _, e := range strict.Errors {
			line, col := e.Position()
			ps = append(ps, Problem{Line: line, Column: col, Key: keyPath(e.Key()...), Message: unknownKeyMessage(e.Key())})
		}
		return ps, nil, false
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, col := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		m := typeMismatch.FindStringSubmatch(msg)
		if m != nil {
			msg = fmt.Sprintf("wrong type: expected %s, got a TOML %s", expectedType(de.Key()), m[1])
		}
		// Only a value's error can be set aside; a syntax error has no
		// key, and a duplicate key's document does not parse at all.
		if m != nil || strings.HasPrefix(msg, "invalid duration") {
			badKey = de.Key()
		}
		return []Problem{{Line: line, Column: col, Key: keyPath(de.Key()...), Message: Redact(msg)}}, badKey, true
	}
	return []Problem{{Message: Redact(err.Error())}}, nil, true
}

var typeMismatch = regexp.MustCompile(`^cannot decode TOML ([a-z ]+?) into `)

// configField walks Config's type along a TOML key path and returns the Go
// type found there, or nil when the path leaves the known fields.
func configField(key []string) reflect.Type {
	t := reflect.TypeFor[Config]()
	for _, part := range key {
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct {
			t = t.Elem() // an array of tables: the key names a field of each
		}
		switch t.Kind() {
		case reflect.Map:
			t = t.Elem()
		case reflect.Struct:
			f, ok := fieldByTag(t, part)
			if !ok {
				return nil
			}
			t = f.Type
		default:
			return nil
		}
	}
	return t
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for f := range t.Fields() {
		if tomlName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func tomlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	return name
}

func expectedType(key []string) string {
	t := configField(key)
	if t == nil {
		return "another type"
	}
	if t == reflect.TypeFor[Duration]() {
		return `a duration string like "30s"`
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Bool, reflect.Pointer:
		return "true or false"
	case reflect.Slice:
		return "an array of strings"
	case reflect.Map, reflect.Struct:
		return "a table"
	}
	return t.String()
}

// unknownKeyMessage suggests the nearest known key at the same level.
func unknownKeyMessage(key []string) string {
	if len(key) == 0 {
		return "unknown key"
	}
	parent := configField(key[:len(key)-1])
	if parent == nil {
		return unknownTableMessage(key)
	}
	if parent.Kind() != reflect.Struct {
		return "unknown key"
	}
	last := key[len(key)-1]
	best, bestDist := "", 3 // suggest only close matches, or a known key the typo starts with
	for f := range parent.Fields() {
		name, typo := tomlName(f), strings.ToLower(last)
		if d := humantext.EditDistance(typo, name); d < bestDist || (best == "" && strings.HasPrefix(typo, name)) {
			best, bestDist = name, d
		}
	}
	if best == "" {
		if table := tableWithKey(reflect.TypeFor[Config](), nil, last); table != "" && table != keyPath(key[:len(key)-1]...) {
			return fmt.Sprintf("unknown key (did you mean [%s] %s? put it under that table's header)", table, last)
		}
		return "unknown key"
	}
	return fmt.Sprintf("unknown key (did you mean %q?)", best)
}

// unknownTableMessage is for a key under a table that does not exist,
// like [tool.ReadFile]: the closest name of the first unknown part, with
// the rest of the key kept.
func unknownTableMessage(key []string) string {
	for i := range key {
		parent := configField(key[:i])
		if configField(key[:i+1]) != nil {
			continue
		}
		if parent == nil || parent.Kind() != reflect.Struct {
			break
		}
		var names []string
		for f := range parent.Fields() {
			names = append(names, tomlName(f))
		}
		if best := humantext.Closest(key[i], names); best != "" {
			fixed := append(append(slices.Clone(key[:i]), best), key[i+1:]...)
			return fmt.Sprintf("unknown key (did you mean [%s]?)", keyPath(fixed...))
		}
		break
	}
	return "unknown key"
}

// tableWithKey finds the first table, depth first in Config's order, that
// has a key named name: for a setting written outside its table, like a
// url above every header.
func tableWithKey(t reflect.Type, path []string, name string) string {
	for f := range t.Fields() {
		if f.Type.Kind() != reflect.Struct || f.Type == reflect.TypeFor[Duration]() {
			continue
		}
		sub := append(slices.Clone(path), tomlName(f))
		if _, ok := fieldByTag(f.Type, name); ok {
			return keyPath(sub...)
		}
		if found := tableWithKey(f.Type, sub, name); found != "" {
			return found
		}
	}
	return ""
}

var bareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// keyPath joins key parts as TOML writes them, quoting parts that need it.
func keyPath(parts ...string) string {
	quoted := make([]string, len(parts))
	for i, p := range parts {
		if bareKey.MatchString(p) {
			quoted[i] = p
		} else {
			quoted[i] = strconv.Quote(p)
		}
	}
	return strings.Join(quoted, ".")
}

func indexKey(key string, i int) string { return fmt.Sprintf("%s[%d]", key, i) }

// positionIndex maps key paths (as keyPath writes them, array elements as
// key[i]) to where they appear in the document. go-toml reports positions
// only for decode errors; this lets semantic problems point at a line too.
type positionIndex map[string][2]int

func (idx positionIndex) find(key string) (line, col int) {
	if pos, ok := idx[key]; ok {
		return pos[0], pos[1]
	}
	if i := strings.LastIndexByte(key, '['); i > 0 && strings.HasSuffix(key, "]") {
		return idx.find(key[:i])
	}
	return 0, 0
}

// pointToFirst adds to each duplicate table or key problem where the
// first one is: a snippet pasted below a table of the same name otherwise
// leaves the reader searching a long file for it.
func pointToFirst(ps []Problem, idx positionIndex) []Problem {
	for i, p := range ps {
		if p.Line == 0 || !(strings.HasSuffix(p.Message, "already exists") || strings.HasSuffix(p.Message, "already defined")) {
			continue
		}
		// go-toml names a duplicate key without its table: the nearest
		// earlier key of that name is the first one.
		first := 0
		for key, pos := range idx {
			if (key == p.Key || strings.HasSuffix(key, "."+p.Key)) && pos[0] < p.Line && pos[0] > first {
				first = pos[0]
			}
		}
		if first > 0 {
			ps[i].Message += fmt.Sprintf(" (first at line %d: edit that one instead of adding another)", first)
		}
	}
	return ps
}

func (idx positionIndex) add(key string, pos [2]int) {
	if _, dup := idx[key]; !dup && pos[0] > 0 {
		idx[key] = pos
	}
}

// docScan is what scanDocument learns from a document go-toml already decoded.
type docScan struct {
	positions positionIndex
	// problems go-toml lets through: a bare number decodes into a Duration
	// as nanoseconds, so `ping_interval = 20` would mean 20ns.
	problems []Problem
	p        unstable.Parser
	lines    lineStarts
}

func scanDocument(data []byte) *docScan {
	s := &docScan{positions: positionIndex{}, lines: indexLines(data)}
	s.p.Reset(data)
	var table []string
	for s.p.NextExpression() {
		e := s.p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			var pos [2]int
			table, pos = s.keyParts(e.Key())
			s.positions.add(keyPath(table...), pos)
		case unstable.KeyValue:
			s.addKeyValue(table, e)
		}
	}
	return s
}

func (s *docScan) addKeyValue(prefix []string, kv *unstable.Node) {
	parts, pos := s.keyParts(kv.Key())
	full := append(slices.Clone(prefix), parts...)
	path := keyPath(full...)
	s.positions.add(path, pos)
	v := kv.Value()
	if v.Kind != unstable.String && configField(full) == reflect.TypeFor[Duration]() {
		at := s.start(v.Raw)
		s.problems = append(s.problems, Problem{Line: at[0], Column: at[1], Key: path,
			Message: fmt.Sprintf("wrong type: expected %s, got a TOML %s", expectedType(full), strings.ToLower(v.Kind.String()))})
	}
	children := v.Children()
	for i := 0; children.Next(); i++ {
		child := children.Node()
		switch v.Kind {
		case unstable.Array:
			if child.Raw.Length > 0 {
				s.positions.add(indexKey(path, i), s.start(child.Raw))
			}
		case unstable.InlineTable:
			s.addKeyValue(full, child)
		}
	}
}

// start is where r begins. Not the parser's Shape, which counts the lines
// from the top of the document on every call: with one call per key that
// made a long config's check quadratic.
func (s *docScan) start(r unstable.Range) [2]int {
	return s.lines.position(int(r.Offset))
}

// lineStarts holds the offset of each line's first byte, in order.
type lineStarts []int

func indexLines(data []byte) lineStarts {
	starts := lineStarts{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// position is the 1-based line and column (in bytes, as go-toml counts) of
// offset.
func (ls lineStarts) position(offset int) [2]int {
	line, found := slices.BinarySearch(ls, offset)
	if !found {
		line-- // offset is inside the line before the first start above it
	}
	return [2]int{line + 1, offset - ls[line] + 1}
}

// keyParts returns a key's parts and the position of its first part.
func (s *docScan) keyParts(it unstable.Iterator) ([]string, [2]int) {
	var parts []string
	var pos [2]int
	for it.Next() {
		n := it.Node()
		if parts == nil {
			pos = s.start(n.Raw)
		}
		parts = append(parts, string(n.Data))
	}
	return parts, pos
}

package builtin

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The dispatcher coerces a typed tool's arguments before Invoke, but these
// readers accept the raw forms too (VCP sends every value as a string), so a
// tool called some other way still gets a clear answer.

// argString returns a string argument; absent, null or blank gives "".
func argString(args map[string]json.RawMessage, name string) (string, error) {
	raw, ok := args[name]
	if !ok || isNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%w: %s must be a string", ErrBadArgument, name)
	}
	return s, nil
}

// argInt returns an integer argument within [lo, hi], def when absent.
func argInt(args map[string]json.RawMessage, name string, def, lo, hi int) (int, error) {
	text, ok := scalarText(args, name)
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(text)
	if err != nil {
		// Models write 3.0 for 3; accept a whole float.
		f, ferr := strconv.ParseFloat(text, 64)
		if ferr != nil || f != float64(int(f)) {
			return 0, fmt.Errorf("%w: %s must be a whole number from %d to %d, got %q", ErrBadArgument, name, lo, hi, clip(text))
		}
		n = int(f)
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("%w: %s must be from %d to %d, got %d", ErrBadArgument, name, lo, hi, n)
	}
	return n, nil
}

// argBool returns a boolean argument, def when absent.
func argBool(args map[string]json.RawMessage, name string, def bool) (bool, error) {
	text, ok := scalarText(args, name)
	if !ok {
		return def, nil
	}
	switch strings.ToLower(text) {
	case "true", "yes", "1", "on":
		return true, nil
	case "false", "no", "0", "off":
		return false, nil
	}
	return false, fmt.Errorf("%w: %s must be true or false, got %q", ErrBadArgument, name, clip(text))
}

// scalarText gives the text of a string, number or boolean argument; absent,
// null and blank strings count as absent.
func scalarText(args map[string]json.RawMessage, name string) (string, bool) {
	raw, ok := args[name]
	if !ok || isNull(raw) {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		s = strings.TrimSpace(s)
		return s, s != ""
	}
	return strings.TrimSpace(string(raw)), true
}

func isNull(raw json.RawMessage) bool {
	return strings.TrimSpace(string(raw)) == "null"
}

// clip shortens a bad value quoted back in an error.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// argFilterMode reads filterMode: true for "gitignore" (the default), false for "none".
func argFilterMode(args map[string]json.RawMessage) (gitignore bool, err error) {
	mode, _ := scalarText(args, "filterMode")
	switch strings.ToLower(mode) {
	case "", "gitignore":
		return true, nil
	case "none":
		return false, nil
	}
	return true, fmt.Errorf("%w: filterMode must be \"gitignore\" or \"none\", got %q", ErrBadArgument, clip(mode))
}

// argList reads a call's arguments and gathers their problems, so that one
// answer names them all.
type argList struct {
	args map[string]json.RawMessage
	errs []error
}

// add keeps err when it is one.
func (l *argList) add(err error) {
	if err != nil {
		l.errs = append(l.errs, err)
	}
}

// err is every problem joined, nil when there is none.
func (l *argList) err() error { return errors.Join(l.errs...) }

func (l *argList) string(name string) string {
	v, err := argString(l.args, name)
	l.add(err)
	return v
}

func (l *argList) int(name string, def, lo, hi int) int {
	v, err := argInt(l.args, name, def, lo, hi)
	l.add(err)
	return v
}

func (l *argList) bool(name string, def bool) bool {
	v, err := argBool(l.args, name, def)
	l.add(err)
	return v
}

func (l *argList) filterMode() (gitignore bool) {
	v, err := argFilterMode(l.args)
	l.add(err)
	return v
}

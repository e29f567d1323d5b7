// Package servicetmpl expands the templates of the service files (systemd
// units, launchd property lists). It knows the small subset of text/template
// syntax those files use and nothing more:
//
//	{{FUNC .Field}}          the field's value passed through a named function
//	{{if .Field}}…{{end}}    the text between, when the field is not empty
//
// with text/template's trim markers ("{{- " and " -}}" drop the blanks before
// or after an action). It exists because text/template evaluates fields and
// methods through reflection, and a binary that links it keeps every exported
// method of every type it might reach: about a tenth of vcpnode's size.
package servicetmpl

import (
	"errors"
	"fmt"
	"strings"
)

// ErrTemplate means a template uses something this package does not know,
// or names a field or function it was not given.
var ErrTemplate = errors.New("service template")

// Expand renders text with the given string fields and functions. Every
// field and function the template names must be given; a missing one is an
// error, never an empty value.
func Expand(text string, fields map[string]string, funcs map[string]func(string) string) (string, error) {
	var out strings.Builder
	depth, skipFrom := 0, 0 // skipFrom > 0: inside an if at that depth whose field is empty
	for line := 1; ; {
		open := strings.Index(text, "{{")
		if open < 0 {
			break
		}
		at := line + strings.Count(text[:open], "\n") // the action's line, for errors
		end := strings.Index(text[open:], "}}")
		if end < 0 {
			return "", fmt.Errorf("%w: line %d: unclosed action", ErrTemplate, at)
		}
		end += open
		action := text[open+2 : end]
		before, rest := text[:open], text[end+2:]
		if a, ok := strings.CutPrefix(action, "- "); ok {
			action, before = a, strings.TrimRight(before, " \t\r\n")
		}
		if a, ok := strings.CutSuffix(action, " -"); ok {
			action, rest = a, strings.TrimLeft(rest, " \t\r\n")
		}
		if skipFrom == 0 {
			out.WriteString(before)
		}
		line += strings.Count(text[:len(text)-len(rest)], "\n")
		words := strings.Fields(action)
		switch {
		case len(words) == 2 && words[0] == "if":
			value, err := field(fields, words[1], at)
			if err != nil {
				return "", err
			}
			depth++
			if value == "" && skipFrom == 0 {
				skipFrom = depth
			}
		case len(words) == 1 && words[0] == "end":
			if depth == 0 {
				return "", fmt.Errorf("%w: line %d: end without if", ErrTemplate, at)
			}
			if skipFrom == depth {
				skipFrom = 0
			}
			depth--
		case len(words) == 2:
			fn, ok := funcs[words[0]]
			if !ok {
				return "", fmt.Errorf("%w: line %d: no function %q", ErrTemplate, at, words[0])
			}
			value, err := field(fields, words[1], at)
			if err != nil {
				return "", err
			}
			if skipFrom == 0 {
				out.WriteString(fn(value))
			}
		default:
			return "", fmt.Errorf("%w: line %d: unknown action {{%s}}", ErrTemplate, at, action)
		}
		text = rest
	}
	if depth > 0 {
		return "", fmt.Errorf("%w: if without end", ErrTemplate)
	}
	out.WriteString(text)
	return out.String(), nil
}

func field(fields map[string]string, ref string, line int) (string, error) {
	name, ok := strings.CutPrefix(ref, ".")
	if !ok {
		return "", fmt.Errorf("%w: line %d: %q is not a field (.Name)", ErrTemplate, line, ref)
	}
	value, ok := fields[name]
	if !ok {
		return "", fmt.Errorf("%w: line %d: no field %q", ErrTemplate, line, name)
	}
	return value, nil
}

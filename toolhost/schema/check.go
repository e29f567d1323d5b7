package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/vcpnode/vcpnode/internal/humantext"
)

// Check checks and coerces the arguments of a call against s. It returns a
// new map in which:
//   - strings, as VCP sends every value, are coerced to the parameter's type:
//     "10" → 10, "true" → true, JSON text → array or object; a number or
//     boolean given for a string parameter becomes its text;
//   - an absent argument (or null, or an empty string for a non-string
//     parameter) takes the parameter's default when it has one;
//   - aliases are mapped back to the parameter's Name, except for a
//     parameter selecting "command" when selecting is set: the tool's commands
//     are then told apart by "command", which keeps that key and is passed
//     on, and the parameter stays under its alias;
//   - keys the server injects (IsInjectedArg) are passed on untouched.
//
// A missing required argument, a value of the wrong type, one outside the
// enum, or an unknown argument is a problem: one sentence each, in
// parameter order, unknown arguments last. The map is meaningful only when
// there are none.
func (s *Schema) Check(args map[string]json.RawMessage, selecting bool) (map[string]json.RawMessage, []string) {
	params := s.Params
	out := make(map[string]json.RawMessage, len(args)+len(params))
	var problems []string
	used := make(map[string]bool, len(args))
	for _, p := range params {
		// A parameter selecting "command" of a tool whose commands are told
		// apart by "command" stays under its alias: the selection keeps
		// that key, and the tool maps the alias back itself.
		name := p.Name
		if selecting && p.Name == CommandArg {
			name = p.WireName()
		}
		key, raw, present := lookupParam(p, args)
		if name != p.Name {
			// "command" is the selection here, never this parameter.
			raw, present = args[name]
			key = name
		}
		if present && p.Alias != "" && p.Alias != p.Name && name == p.Name {
			if _, both := args[p.Name]; both {
				if _, alias := args[p.Alias]; alias {
					problems = append(problems, fmt.Sprintf("argument %q is given twice, as %q and as %q", p.Name, p.Name, p.Alias))
					used[p.Name], used[p.Alias] = true, true
					continue
				}
			}
		}
		if present {
			used[key] = true
		}
		if present && (isNull(raw) || (p.Type != TypeString && p.Type != "" && isBlankString(raw))) {
			present = false
		}
		if !present {
			switch {
			case p.Default != nil:
				out[name] = p.Default
			case p.Required:
				problems = append(problems, fmt.Sprintf("missing required argument %q (%s)", p.WireName(), typeText(p.Type)))
			}
			continue
		}
		v, problem := coerce(p, raw)
		if problem != "" {
			problems = append(problems, fmt.Sprintf("argument %q: %s", p.WireName(), problem))
			continue
		}
		if len(p.Enum) > 0 && !inEnum(v, p.Enum) {
			problems = append(problems, fmt.Sprintf("argument %q: %s is not one of %s", p.WireName(), clip(string(v)), enumText(p.Enum)))
			continue
		}
		out[name] = v
	}
	var unknown []string
	for k, v := range args {
		switch {
		case used[k]:
		case IsInjectedArg(k), selecting && k == CommandArg:
			out[k] = v
		default:
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		problems = append(problems, fmt.Sprintf("unknown argument %q: the parameters are %s", k, paramList(params)))
	}
	return out, problems
}

// lookupParam finds p's argument under its wire name or its own name (the
// XML and JSON call formats can carry names VCP cannot).
func lookupParam(p Param, args map[string]json.RawMessage) (string, json.RawMessage, bool) {
	if raw, ok := args[p.WireName()]; ok {
		return p.WireName(), raw, true
	}
	if raw, ok := args[p.Name]; ok {
		return p.Name, raw, true
	}
	return "", nil, false
}

// coerce returns raw as a value of p's type, or a problem.
func coerce(p Param, raw json.RawMessage) (json.RawMessage, string) {
	raw = json.RawMessage(bytes.TrimSpace(raw))
	if !json.Valid(raw) {
		return nil, "is not valid JSON"
	}
	s, isString := StringValue(raw)
	switch p.Type {
	case "":
		return raw, ""
	case TypeString:
		if isString {
			return raw, ""
		}
		if raw[0] == '{' || raw[0] == '[' {
			return nil, "must be a string, not " + JSONKind(raw)
		}
		return mustMarshal(string(raw)), "" // a number or boolean, as its text
	case TypeBoolean:
		text := string(raw)
		if isString {
			text = strings.ToLower(strings.TrimSpace(s))
		}
		if text == "true" || text == "false" {
			return json.RawMessage(text), ""
		}
		return nil, fmt.Sprintf("%s is not a boolean (true or false)", clip(string(raw)))
	case TypeInteger, TypeNumber:
		text := string(raw)
		if isString {
			text = strings.TrimSpace(s)
		}
		n, ok := jsonNumber(text)
		if !ok {
			return nil, fmt.Sprintf("%s is not %s", clip(string(raw)), article(p.Type))
		}
		if p.Type == TypeNumber {
			return n, ""
		}
		i, ok := integral(n)
		if !ok {
			return nil, fmt.Sprintf("%s is not an integer", clip(string(raw)))
		}
		return i, ""
	case TypeArray, TypeObject:
		v := raw
		if isString {
			v = json.RawMessage(strings.TrimSpace(s))
			if !json.Valid(v) {
				return nil, fmt.Sprintf("%s is not %s (write it as JSON, e.g. %s)", clip(string(raw)), article(p.Type), emptyOf(p.Type))
			}
		}
		if kind := JSONKind(v); kind != article(p.Type) {
			return nil, fmt.Sprintf("must be %s, not %s", article(p.Type), kind)
		}
		return v, ""
	}
	return raw, "" // an unknown type checks nothing (FromJSONSchema refuses them)
}

// jsonNumber reports whether text is a JSON number and returns it as one.
func jsonNumber(text string) (json.RawMessage, bool) {
	if text == "" || (text[0] != '-' && (text[0] < '0' || text[0] > '9')) {
		return nil, false
	}
	var n json.Number
	if err := json.Unmarshal([]byte(text), &n); err != nil {
		return nil, false
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) {
		return nil, false
	}
	return json.RawMessage(text), true
}

// integral returns n as an integer when it has no fractional part: "10",
// "10.0" and "1e3" are integers, "2.5" is not. Plain digit runs are kept
// as they are, however long.
func integral(n json.RawMessage) (json.RawMessage, bool) {
	text := string(n)
	if !strings.ContainsAny(text, ".eE") {
		return n, true
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return nil, false
	}
	return json.RawMessage(strconv.FormatFloat(f, 'f', 0, 64)), true
}

// inEnum compares v with each allowed value as JSON values, not as text.
func inEnum(v json.RawMessage, enum []json.RawMessage) bool {
	var got any
	if err := json.Unmarshal(v, &got); err != nil {
		return false
	}
	for _, e := range enum {
		var want any
		if json.Unmarshal(e, &want) == nil && jsonEqual(got, want) {
			return true
		}
	}
	return false
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// StringValue returns raw's text when raw is a JSON string.
func StringValue(raw json.RawMessage) (string, bool) {
	raw = json.RawMessage(bytes.TrimSpace(raw))
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func isBlankString(raw json.RawMessage) bool {
	s, ok := StringValue(raw)
	return ok && strings.TrimSpace(s) == ""
}

// Blank reports whether raw is null or a string of only white space: an
// argument given so is taken as absent.
func Blank(raw json.RawMessage) bool { return isNull(raw) || isBlankString(raw) }

func article(t Type) string {
	switch t {
	case TypeInteger, TypeArray, TypeObject:
		return "an " + string(t)
	}
	return "a " + string(t)
}

func emptyOf(t Type) string {
	if t == TypeArray {
		return `["a", "b"]`
	}
	return `{"key": "value"}`
}

func paramList(params []Param) string {
	if len(params) == 0 {
		return "none"
	}
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.WireName()
	}
	return strings.Join(names, ", ")
}

// clip shortens a value quoted in a problem.
func clip(s string) string { return humantext.Clip(s, 80) }

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("marshal %T: %v", v, err)) // only called with strings
	}
	return b
}

package schema

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestFromJSON(t *testing.T) {
	raw := json.RawMessage(`{"type":"object","properties":{
		"query":{"type":"string","description":"what to look for"},
		"limit":{"type":["integer","null"],"default":10},
		"kind":{"enum":["a","b"]},
		"file-path":{"type":"string","title":"File path"},
		"command":{"type":"string"}},
		"required":["query","command"]}`)
	s, err := FromJSON(raw)
	if err != nil {
		t.Fatalf("FromJSON: %v", err)
	}
	if string(s.Raw) != string(raw) {
		t.Errorf("Raw not kept")
	}
	type row struct {
		name, alias, typ string
		req              bool
		def              string
		enum             int
		desc             string
	}
	var got []row
	for _, p := range s.Params {
		got = append(got, row{p.Name, p.Alias, string(p.Type), p.Required, string(p.Default), len(p.Enum), p.Description})
	}
	want := []row{
		{"command", "command_", "string", true, "", 0, ""},
		{"query", "", "string", true, "", 0, "what to look for"},
		{"file-path", "file_path", "string", false, "", 0, "File path"},
		{"kind", "", "", false, "", 2, ""},
		{"limit", "", "integer", false, "10", 0, ""},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("params:\n%v\nwant:\n%v", got, want)
	}
	// The alias is what the model writes and the name is what the tool gets.
	checkOK(t, s, kv("command_", `"ls"`, "query", `"x"`, "file_path", `"/a"`, "limit", `"5"`), false,
		map[string]string{"command": `"ls"`, "query": `"x"`, "file-path": `"/a"`, "limit": `5`})
}

func TestFromJSONRefusesInvalidSchemas(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{`[]`, "not a JSON object"},
		{`{"type":"array"}`, "must be an object"},
		{`{"properties":[1]}`, "cannot unmarshal"},
		{`{"properties":{"a":1}}`, `property "a" is not a schema object`},
		{`{"properties":{"a":{"type":"date"}}}`, `type "date" is not one of`},
		{`{"properties":{"a":{"type":7}}}`, "neither a type name nor a list"},
		{`{"properties":{},"required":["x"]}`, `required property "x" is not declared`},
		{`{"type":"object"`, "unexpected end"},
	} {
		_, err := FromJSON(json.RawMessage(tc.raw))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("FromJSON(%s) = %v, want ErrInvalid mentioning %q", tc.raw, err, tc.want)
		}
	}
}

func TestSchemaDescription(t *testing.T) {
	for raw, want := range map[string]string{
		"":                                  "",
		`{"description":"Read\n  a file."}`: "Read a file.",
		`{"properties":{}}`:                 "",
		`{"description":7}`:                 "",
	} {
		s := &Schema{Raw: json.RawMessage(raw)}
		if got := s.Description(); got != want {
			t.Errorf("Description of %q = %q, want %q", raw, got, want)
		}
	}
}

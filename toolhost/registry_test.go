package toolhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func specTool(name, source string) Tool {
	return funcTool{spec: Spec{Name: name, Source: source}, fn: func(context.Context, Call) (any, error) { return nil, nil }}
}

func TestRegistryAdd(t *testing.T) {
	r := NewRegistry()
	if err := r.Add(specTool("B", "b.json")); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(specTool("A", "a.json")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		tool Tool
		want error
		text string
	}{
		{"nil", nil, ErrInvalidTool, "invalid tool: nil tool"},
		{"empty name", specTool("", "x.json"), ErrInvalidTool, "invalid tool: tool from x.json has an empty name"},
		{"blank name", specTool("  ", ""), ErrInvalidTool, "invalid tool: tool from an unnamed source has an empty name"},
		{"padded name", specTool(" A", "y.json"), ErrInvalidTool, `invalid tool: tool name " A" from y.json has leading or trailing spaces; the server matches names exactly`},
		{"duplicate", specTool("A", "other.json"), ErrDuplicateTool, `duplicate tool name: "A" from other.json is already registered from a.json; rename one of them`},
	}
	for _, tc := range tests {
		err := r.Add(tc.tool)
		if !errors.Is(err, tc.want) || err.Error() != tc.text {
			t.Errorf("%s: Add = %v, want %q (%v)", tc.name, err, tc.text, tc.want)
		}
	}
	if r.Len() != 2 {
		t.Fatalf("Len = %d after failed adds", r.Len())
	}
	if tool, ok := r.Get("A"); !ok || tool.Spec().Source != "a.json" {
		t.Fatalf("Get(A) = %v, %v", tool, ok)
	}
	if _, ok := r.Get("a"); ok {
		t.Fatal("Get is not case-sensitive")
	}
	if got := names(r.List()); got != "A,B" {
		t.Fatalf("List = %s", got)
	}
}

func names(tools []Tool) string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Spec().Name)
	}
	return strings.Join(out, ",")
}

func TestRegistryReplace(t *testing.T) {
	r := NewRegistry()
	if err := r.Add(specTool("Old", "")); err != nil {
		t.Fatal(err)
	}
	err := r.Replace([]Tool{specTool("X", "1"), specTool("", "2"), specTool("X", "3")})
	if !errors.Is(err, ErrInvalidTool) || !errors.Is(err, ErrDuplicateTool) {
		t.Fatalf("Replace = %v, want both problems", err)
	}
	if got := names(r.List()); got != "Old" {
		t.Fatalf("failed Replace changed the registry: %s", got)
	}
	if err := r.Replace([]Tool{specTool("New2", ""), specTool("New1", "")}); err != nil {
		t.Fatal(err)
	}
	if got := names(r.List()); got != "New1,New2" {
		t.Fatalf("after Replace: %s", got)
	}
	if _, ok := r.Get("Old"); ok {
		t.Fatal("Old survived Replace")
	}
}

func TestRegistryConcurrentUse(t *testing.T) {
	r := NewRegistry()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 50 {
				name := fmt.Sprintf("w%d-%d", w, i)
				if err := r.Add(specTool(name, "")); err != nil {
					t.Error(err)
					return
				}
				if _, ok := r.Get(name); !ok {
					t.Errorf("%s missing right after Add", name)
				}
				r.List()
			}
		})
	}
	wg.Wait()
	if r.Len() != 200 {
		t.Fatalf("Len = %d, want 200", r.Len())
	}
}

// A call names a tool by its name, an alias, or {tool}_{command} (seed
// 000's routing): the last becomes the tool's call with that command; a
// command the call gives itself is kept; an unknown name stays unknown.
func TestCallNamesResolve(t *testing.T) {
	files := filesTool()
	aliased := newFuncTool("ReadFile", func(_ context.Context, c Call) (any, error) { return "read " + string(c.Args["path"]), nil })
	aliased.spec.Aliases = []string{"read_file"}
	d := newTestDispatcher(t, Policy{}, Limits{}, files, aliased)
	r := newReplies()
	call := func(name, id string, args map[string]json.RawMessage) Outcome {
		t.Helper()
		if !d.Dispatch(context.Background(), name, Call{RequestID: id, Args: args}, r.reply) {
			t.Fatalf("Dispatch(%s) refused", id)
		}
		return r.next(t)
	}
	wantText(t, call("Files_delete", "1", nil), "1", "ran delete")
	wantText(t, call("Files_read", "2", map[string]json.RawMessage{"command": json.RawMessage(`"delete"`)}), "2", "ran delete")
	wantText(t, call("read_file", "3", map[string]json.RawMessage{"path": json.RawMessage(`"a"`)}), "3", `read "a"`)
	wantErr(t, call("Files_move", "4", nil), "4", `unknown tool "Files_move"`, ErrUnknownTool)
	wantErr(t, call("ReadFile_ReadFile", "5", nil), "5", `unknown tool "ReadFile_ReadFile"`, ErrUnknownTool) // one command: no routing
}

package builtin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/files"
)

// writeTree creates files (path → content) under root; a content starting
// with "->" makes a symlink to the rest.
func writeTree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// realDir is t.TempDir without symlinks in it, as roots are resolved.
func realDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func access(t testing.TB, deny []string, roots ...string) *files.Access {
	t.Helper()
	a := files.NewAccess(files.Options{Roots: roots, Deny: deny})
	if err := a.Ready(); err != nil {
		t.Fatal(err)
	}
	return a
}

// args turns Go values into raw JSON arguments.
func args(t testing.TB, kv ...any) map[string]json.RawMessage {
	t.Helper()
	m := map[string]json.RawMessage{}
	for i := 0; i < len(kv); i += 2 {
		b, err := json.Marshal(kv[i+1])
		if err != nil {
			t.Fatal(err)
		}
		m[kv[i].(string)] = b
	}
	return m
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// run invokes tool and wants a text answer.
func run(t testing.TB, tool toolhost.Tool, a map[string]json.RawMessage) string {
	t.Helper()
	out, err := tool.Invoke(testCtx(t), toolhost.Call{RequestID: "t", Args: a})
	if err != nil {
		t.Fatalf("%s(%v): %v", tool.Spec().Name, a, err)
	}
	s, ok := out.(string)
	if !ok {
		t.Fatalf("%s answered %T, want a string", tool.Spec().Name, out)
	}
	return s
}

// fail invokes tool and wants an error.
func fail(t testing.TB, tool toolhost.Tool, a map[string]json.RawMessage) error {
	t.Helper()
	out, err := tool.Invoke(testCtx(t), toolhost.Call{RequestID: "t", Args: a})
	if err == nil {
		t.Fatalf("%s(%v) answered %v, want an error", tool.Spec().Name, a, out)
	}
	return err
}

package sandbox

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

// TestDerivedNeverOpensProtected: the kernel agrees. For every derivation
// rule, a process confined with the grants derived for the rule's command
// (its own folder, program and temporary directory included) cannot read
// the node's own files or ~/.ssh, though each exists and root could.
func TestDerivedNeverOpensProtected(t *testing.T) {
	o, rules, secrets := protectedRig(t)
	trees, err := proctree.New(proctree.Options{Log: zerolog.Nop()})
	if err != nil {
		t.Skipf("no process trees here: %v", err)
	}
	t.Cleanup(trees.Close)
	sb, err := New(Options{Home: o.Home, Protected: o.Protected, TempDir: t.TempDir(), Trees: trees, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	if !sb.Capabilities().Files {
		t.Skipf("Landlock is not available here: %s", sb.Capabilities().Why)
	}
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	for name, c := range rules {
		t.Run(name, func(t *testing.T) {
			c.Tool, c.Profile = "probe", Default
			r, err := sb.Wrap(c)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			// The rule's grants, another program: cat tries every secret.
			r.Path, r.Args = "/bin/cat", append([]string{"cat"}, secrets...)
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			proc, tree, err := r.StartProcess(trees, &os.ProcAttr{Files: []*os.File{devNull, pw, pw}})
			pw.Close()
			if err != nil {
				pr.Close()
				t.Fatal(err)
			}
			var out bytes.Buffer
			copied := make(chan struct{})
			go func() { defer close(copied); _, _ = io.Copy(&out, pr); pr.Close() }()
			if _, err := proc.Wait(); err != nil {
				t.Fatal(err)
			}
			_ = tree.KillAndWait(5 * time.Second)
			tree.Release()
			<-copied
			if strings.Contains(out.String(), "SECRET") {
				t.Errorf("a secret was read:\n%s", out.String())
			}
			if n := strings.Count(out.String(), "Permission denied"); n != len(secrets) {
				t.Errorf("%d of %d reads refused:\n%s", n, len(secrets), out.String())
			}
		})
	}
}

package doccheck

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestBlocks(t *testing.T) {
	doc := "# T\n\n<!-- doccheck: invalid -->\n```toml\n[a]\nb = 1\n```\n\ntext\n\n- item:\n\n  ```console\n  $ vcpnode status\n  ok\n  ```\n<!-- stale -->\nprose\n```sh\nls\n```\n"
	path := filepath.Join(t.TempDir(), "d.md")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Blocks(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Block{
		{File: path, Line: 4, Lang: "toml", Text: "[a]\nb = 1\n", Markers: []string{"<!-- doccheck: invalid -->"}},
		{File: path, Line: 13, Lang: "console", Text: "$ vcpnode status\nok\n"},
		{File: path, Line: 19, Lang: "sh", Text: "ls\n"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if !got[0].Marked("doccheck: invalid") || got[2].Marked("stale") {
		t.Error("markers: only those right above a fence count")
	}

	if err := os.WriteFile(path, []byte("```sh\nls\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Blocks(path); err == nil || !strings.Contains(err.Error(), "never closes") {
		t.Errorf("an unclosed block: %v", err)
	}
}

func TestCommands(t *testing.T) {
	script := `make build    # a comment
sudo -n bin/vcpnode init --hub 'wss://x' --name "dev box"
FOO=1 ps -o pid --ppid $(pidof vcpnode) | grep x
tail -f "$HOME/log" && echo done
`
	got, err := Commands(script)
	if err != nil {
		t.Fatal(err)
	}
	want := []Command{
		{1, []string{"make", "build"}},
		{2, []string{"bin/vcpnode", "init", "--hub", "wss://x", "--name", "dev box"}},
		{3, []string{"ps", "-o", "pid", "--ppid", Unknown}},
		{3, []string{"pidof", "vcpnode"}},
		{3, []string{"grep", "x"}},
		{4, []string{"tail", "-f", Unknown}},
		{4, []string{"echo", "done"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if _, err := Commands("if then"); err == nil {
		t.Error("a snippet that is not shell parses")
	}
}

func TestTranscript(t *testing.T) {
	got, err := Transcript("$ vcpnode status\nconnected\n  $ vcpnode deny 1 --reason \"not now\"\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []Command{{1, []string{"vcpnode", "status"}}, {3, []string{"vcpnode", "deny", "1", "--reason", "not now"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

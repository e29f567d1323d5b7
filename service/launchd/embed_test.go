package launchd

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func sampleAgent() Job {
	return Job{
		Binary: "/Users/alice/.local/bin/vcpnode",
		Config: "/Users/alice/.config/vcpnode/config.toml",
		LogDir: "/Users/alice/Library/Logs/vcpnode",
	}
}

func sampleDaemon() Job {
	return Job{
		Binary:     "/usr/local/bin/vcpnode",
		Config:     "/usr/local/etc/vcpnode/config.toml",
		LogDir:     "/Library/Logs/vcpnode",
		WorkingDir: "/usr/local/var/vcpnode",
	}
}

func TestGolden(t *testing.T) {
	tests := []struct {
		golden string
		render func(Job) ([]byte, error)
		job    Job
	}{
		{"agent.plist.golden", Agent, sampleAgent()},
		{"daemon.plist.golden", Daemon, sampleDaemon()},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			got, err := tt.render(tt.job)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tt.golden)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./scripts/launchd -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("rendered plist differs from %s; if the change is meant, run go test ./scripts/launchd -update\n--- rendered:\n%s", path, got)
			}
		})
	}
}

// The property lists are read back as launchd reads them: keys and values.
func TestPlistContents(t *testing.T) {
	odd := Job{Binary: "/opt/a&b/vcpnode", Config: "/x/<c>.toml", LogDir: "/Library/Logs/vcpnode", WorkingDir: "/var/empty"}
	tests := []struct {
		name   string
		render func(Job) ([]byte, error)
		job    Job
		want   map[string]any
	}{
		{"agent", Agent, sampleAgent(), map[string]any{
			"Label":             Label,
			"ProgramArguments":  []any{"/Users/alice/.local/bin/vcpnode", "run", "--config", "/Users/alice/.config/vcpnode/config.toml"},
			"RunAtLoad":         true,
			"KeepAlive":         map[string]any{"SuccessfulExit": false},
			"StandardErrorPath": "/Users/alice/Library/Logs/vcpnode/vcpnode.log",
			"StandardOutPath":   "/Users/alice/Library/Logs/vcpnode/vcpnode.log",
		}},
		{"daemon", Daemon, sampleDaemon(), map[string]any{
			"Label":            Label,
			"RunAtLoad":        true,
			"KeepAlive":        map[string]any{"SuccessfulExit": false},
			"WorkingDirectory": "/usr/local/var/vcpnode",
			"ExitTimeOut":      "30",
		}},
		{"escaped", Daemon, odd, map[string]any{
			"ProgramArguments": []any{"/opt/a&b/vcpnode", "run", "--config", "/x/<c>.toml"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := tt.render(tt.job)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodePlist(out)
			if err != nil {
				t.Fatalf("not a property list: %v\n%s", err, out)
			}
			for k, want := range tt.want {
				if !reflect.DeepEqual(got[k], want) {
					t.Errorf("%s = %#v, want %#v", k, got[k], want)
				}
			}
		})
	}
}

func TestRenderRefusesBadPaths(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Job)
	}{
		{"tilde", func(j *Job) { j.Config = "~/.config/vcpnode/config.toml" }},
		{"empty log dir", func(j *Job) { j.LogDir = "" }},
		{"control character", func(j *Job) { j.Binary = "/usr/local/bin/vcp\x07node" }},
		{"no working directory", func(j *Job) { j.WorkingDir = "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := sampleDaemon()
			tt.edit(&j)
			if _, err := Daemon(j); !errors.Is(err, ErrBadPath) {
				t.Errorf("Daemon() error = %v, want ErrBadPath", err)
			}
		})
	}
	if _, err := Agent(Job{Label: "a b", Binary: "/b", Config: "/c", LogDir: "/l"}); err == nil {
		t.Error("Agent() accepted a label with a space")
	}
}

func TestPlutilLint(t *testing.T) {
	plutil, err := exec.LookPath("plutil")
	if err != nil {
		t.Skip("plutil is not installed (it comes with macOS); the plists were checked by the XML decoder only")
	}
	for name, render := range map[string]func(Job) ([]byte, error){"agent": Agent, "daemon": Daemon} {
		out, err := render(sampleDaemon())
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), name+".plist")
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		if msg, err := exec.Command(plutil, "-lint", path).CombinedOutput(); err != nil {
			t.Errorf("plutil -lint %s: %v\n%s", name, err, msg)
		}
	}
}

// decodePlist reads the XML property list subset the templates use: dict,
// array, string, integer (kept as its text), true and false.
func decodePlist(data []byte) (map[string]any, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "dict" {
			v, err := decodeDict(d)
			if err != nil {
				return nil, err
			}
			// The rest must be well-formed too.
			for {
				if _, err := d.Token(); err == io.EOF {
					return v, nil
				} else if err != nil {
					return nil, err
				}
			}
		}
	}
}

func decodeDict(d *xml.Decoder) (map[string]any, error) {
	m := map[string]any{}
	key := ""
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return m, nil
		case xml.StartElement:
			if t.Name.Local == "key" {
				if err := d.DecodeElement(&key, &t); err != nil {
					return nil, err
				}
				continue
			}
			if key == "" {
				return nil, fmt.Errorf("<%s> without a <key>", t.Name.Local)
			}
			v, err := decodeValue(d, t)
			if err != nil {
				return nil, err
			}
			m[key], key = v, ""
		}
	}
}

func decodeValue(d *xml.Decoder, t xml.StartElement) (any, error) {
	switch t.Name.Local {
	case "dict":
		return decodeDict(d)
	case "array":
		var a []any
		for {
			tok, err := d.Token()
			if err != nil {
				return nil, err
			}
			switch e := tok.(type) {
			case xml.EndElement:
				return a, nil
			case xml.StartElement:
				v, err := decodeValue(d, e)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
		}
	case "string", "integer":
		var s string
		err := d.DecodeElement(&s, &t)
		return strings.TrimSpace(s), err
	case "true", "false":
		return t.Name.Local == "true", d.Skip()
	}
	return nil, fmt.Errorf("unexpected <%s>", t.Name.Local)
}

// escapeXML must agree with encoding/xml, which the plists used to be
// escaped with (the binary no longer links it).
func TestEscapeXMLAgreesWithEncodingXML(t *testing.T) {
	inputs := []string{
		"", "plain", `/Users/a "b" & 'c' <d> e`, "tab\tnl\ncr\r", "ctl\x00\x01\x1f\x7f",
		"bad utf8 \xff\xfe end", "\uFFFD real replacement", "\uFFFE\uFFFF \U0001F600 \u00e9\u4e2d",
		"\ud7ff\ue000", "trailing &",
	}
	for r := rune(0); r < 0x300; r++ {
		inputs = append(inputs, "x"+string(r)+"y")
	}
	for _, in := range inputs {
		var want strings.Builder
		if err := xml.EscapeText(&want, []byte(in)); err != nil {
			t.Fatal(err)
		}
		if got := escapeXML(in); got != want.String() {
			t.Errorf("escapeXML(%q) = %q, encoding/xml gives %q", in, got, want.String())
		}
	}
}

func FuzzEscapeXML(f *testing.F) {
	f.Add(`a "b" & <c>` + "\t\n\r\x00\xff\uFFFD")
	f.Fuzz(func(t *testing.T, in string) {
		var want strings.Builder
		_ = xml.EscapeText(&want, []byte(in))
		if got := escapeXML(in); got != want.String() {
			t.Errorf("escapeXML(%q) = %q, encoding/xml gives %q", in, got, want.String())
		}
	})
}

package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"no key here", "no key here"},
		{"ws://h:1/vcp-distributed-server/VCP_Key=abc", "ws://h:1/vcp-distributed-server/VCP_Key=REDACTED"},
		{`dial "ws://h/vcp-distributed-server/VCP_Key=abc": EOF`, `dial "ws://h/vcp-distributed-server/VCP_Key=REDACTED": EOF`},
		{"VCP_Key=abc/next", "VCP_Key=REDACTED/next"},
		{"VCP_Key=abc?x=1", "VCP_Key=REDACTED?x=1"},
		{"VCP_Key=abc#f", "VCP_Key=REDACTED#f"},
		{"VCP_Key=abc def", "VCP_Key=REDACTED def"},
		{"VCP_Key=abc\tdef", "VCP_Key=REDACTED\tdef"},
		{"VCP_Key=abc\ndef", "VCP_Key=REDACTED\ndef"},
		{"VCP_Key=abc\\\"}", "VCP_Key=REDACTED\\\"}"},
		{"`VCP_Key=abc`", "`VCP_Key=REDACTED`"},
		{"<VCP_Key=abc>", "<VCP_Key=REDACTED>"},
		{"vcp_key=abc VCP_KEY=def Vcp_Key=ghi", "VCP_Key=REDACTED VCP_Key=REDACTED VCP_Key=REDACTED"},
		{"VCP_Key%3Dabc VCP_Key%3ddef", "VCP_Key=REDACTED VCP_Key=REDACTED"},
		{"VCP_Key=", "VCP_Key=REDACTED"},
		{"VCP_Key=a'b(c)*+,;=:@!$&~.-_ tail", "VCP_Key=REDACTED tail"},
		{"VCP_Key=pct%20key/", "VCP_Key=REDACTED/"},
		{"VCP_Key=ünï/", "VCP_Key=REDACTED/"},
		{"VCP_Key=aVCP_Key=b", "VCP_Key=REDACTED"},
		{"VCP_Key:abc", "VCP_Key:abc"},
		{`{"url":"ws://h/vcp-distributed-server/VCP_Key=abc","n":1}`, `{"url":"ws://h/vcp-distributed-server/VCP_Key=REDACTED","n":1}`},
		{`{"msg":"dial \"ws://h/VCP_Key=abc\": EOF"}`, `{"msg":"dial \"ws://h/VCP_Key=REDACTED\": EOF"}`},
		{`{"url":"ws://h/VCP_Key=a\u0026b\u003cc"}`, `{"url":"ws://h/VCP_Key=REDACTED"}`},
	}
	for _, tt := range tests {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestRedactKeepsJSONValid redacts JSON as encoding/json writes it, which
// escapes '&' (a valid key character) and quotes.
func TestRedactKeepsJSONValid(t *testing.T) {
	for _, key := range []string{"plain", "a&b", "x!$&'()*+,;=:@y"} {
		in, err := json.Marshal(map[string]string{"error": `Get "ws://h/vcp-distributed-server/VCP_Key=` + key + `": EOF`, "key": "VCP_Key=" + key})
		if err != nil {
			t.Fatal(err)
		}
		out := Redact(string(in))
		var back map[string]string
		if err := json.Unmarshal([]byte(out), &back); err != nil {
			t.Errorf("Redact(%s) = %s, no longer JSON: %v", in, out, err)
		}
		if strings.Contains(out, key) || strings.Contains(back["error"]+back["key"], key) {
			t.Errorf("Redact(%s) = %s still holds the key", in, out)
		}
	}
}

func TestRedactedURL(t *testing.T) {
	u, err := HubURL("wss://vcp.example.org", "s3cr3t")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := RedactedURL(u), "wss://vcp.example.org/vcp-distributed-server/VCP_Key=REDACTED"; got != want {
		t.Errorf("RedactedURL = %q, want %q", got, want)
	}
	withPassword, _ := url.Parse("wss://user:pw@h/VCP_Key=s3cr3t")
	if got := RedactedURL(withPassword); strings.Contains(got, "pw") || strings.Contains(got, "s3cr3t") {
		t.Errorf("RedactedURL = %q", got)
	}
	if RedactedURL(nil) != "" {
		t.Error("RedactedURL(nil) should be empty")
	}
}

func TestRedactErrKeepsTheChain(t *testing.T) {
	if RedactErr(nil) != nil {
		t.Fatal("RedactErr(nil) != nil")
	}
	plain := errors.New("nothing secret")
	if RedactErr(plain) != plain {
		t.Error("an error without a key should come back unchanged")
	}

	inner := &url.Error{Op: "Get", URL: "ws://h/vcp-distributed-server/VCP_Key=s3cr3t", Err: io.EOF}
	err := RedactErr(fmt.Errorf("dial hub: %w", inner))
	if strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("RedactErr kept the key: %q", err)
	}
	if want := `dial hub: Get "ws://h/vcp-distributed-server/VCP_Key=REDACTED": EOF`; err.Error() != want {
		t.Errorf("RedactErr = %q, want %q", err, want)
	}
	if !errors.Is(err, io.EOF) {
		t.Error("errors.Is(err, io.EOF) is false after redaction")
	}
	var ue *url.Error
	if !errors.As(err, &ue) || ue != inner {
		t.Error("errors.As(err, *url.Error) lost the original")
	}
	if wrapped := fmt.Errorf("session: %w", err); strings.Contains(wrapped.Error(), "s3cr3t") {
		t.Errorf("wrapping a redacted error showed the key: %q", wrapped)
	}
}

// FuzzRedact checks that a key placed after VCP_Key= never survives: the
// output is the same whatever the key (so nothing of it can be left), and
// every VCP_Key= in the output is followed by REDACTED.
func FuzzRedact(f *testing.F) {
	f.Add("dial ws://h/vcp-distributed-server/", "s3cr3t", "/x: EOF")
	f.Add(`"`, "a'b", `": reset`)
	f.Add("vcp_key=", "k", "")
	f.Add("VCP_Key%3", "D", " ")
	f.Add("", "p%20q", "?q")
	after := regexp.MustCompile(`(?i)vcp_key(=|%3d)`)
	f.Fuzz(func(t *testing.T, prefix, key, suffix string) {
		// The suffix starts with a character that ends a key, as it would in
		// a URL or a quoted string; the key is any run of non-ending bytes.
		suffix = "/" + suffix
		if strings.ContainsAny(key, "/?#\"\\`<> \t\n\v\f\r") || key == "" {
			return
		}
		out := Redact(prefix + "VCP_Key=" + key + suffix)
		other := Redact(prefix + "VCP_Key=" + "x" + suffix)
		if out != other {
			t.Fatalf("output depends on the key:\n%q\n%q", out, other)
		}
		for _, loc := range after.FindAllStringIndex(out, -1) {
			if !strings.HasPrefix(out[loc[0]:], "VCP_Key=REDACTED") {
				t.Fatalf("unredacted VCP_Key at %d in %q", loc[0], out)
			}
		}
		if Redact(out) != out {
			t.Fatalf("Redact is not idempotent on %q", out)
		}
	})
}

// Redact looks for "vcp_key" before running keySegment; every spelling the
// expression matches (any case, the Kelvin sign for k) must still be found,
// and RedactBytes must say the same as Redact.
func TestRedactFindsEveryCaseOfTheKeyParameter(t *testing.T) {
	full := func(s string) string {
		return knownKeys.replace(keySegment.ReplaceAllLiteralString(s, "VCP_Key=REDACTED"))
	}
	var inputs []string
	for mask := range 1 << 6 {
		name := []byte("vcpkey")
		for i := range name {
			if mask&(1<<i) != 0 {
				name[i] -= 'a' - 'A'
			}
		}
		param := string(name[:3]) + "_" + string(name[3:])
		inputs = append(inputs, "x "+param+"=s3cr3t/y", param+"%3Ds3cr3t", `{"u":"`+param+`=a\u0026b"}`)
	}
	inputs = append(inputs, "VCP_\u212aey=s3cr3t tail", "vcp_\u212aEY%3ds3cr3t", "vcp_\u212a", "vcp_", "_key=", "vcpkey=x", "")
	for _, in := range inputs {
		want := full(in)
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
		if got := string(RedactBytes([]byte(in))); got != want {
			t.Errorf("RedactBytes(%q) = %q, want %q", in, got, want)
		}
		if strings.Contains(want, "s3cr3t") {
			t.Errorf("%q keeps its key: %q", in, want)
		}
	}
	clean := []byte(`{"level":"info","tool":"internal_request_file","request_id":"r1","message":"call finished"}`)
	if got := RedactBytes(clean); &got[0] != &clean[0] {
		t.Error("RedactBytes copied a line with nothing to hide")
	}
}

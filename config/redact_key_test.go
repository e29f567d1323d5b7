package config

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// redactRuns makes each run's key new: resolved keys are remembered for the
// life of the process, so a second run (-count=2) must not meet its own.
var redactRuns atomic.Int32

// A key once resolved is redacted wherever it appears, not only after
// VCP_Key=: a peer may echo it in a close reason, a serverId, a tool name.
func TestRedactHidesAResolvedKeyAnywhere(t *testing.T) {
	key := fmt.Sprintf("Bare&Key'42~zz%d", redactRuns.Add(1))
	probe := "tool Tool" + key + " from dist-" + key
	if got := Redact(probe); !strings.Contains(got, key) {
		t.Fatalf("Redact hid a key no config resolved yet (test not isolated?): %q", got)
	}
	c := Default()
	c.Hub.Key = key
	if _, err := c.Key(func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	quoted, _ := json.Marshal("reason: " + key)
	for _, in := range []string{
		probe,
		"file:///srv/" + url.PathEscape(key) + "/x.txt",
		"q=" + url.QueryEscape(key),
		string(quoted), // & escaped as \u0026
		"ws://h/vcp-distributed-server/VCP_Key=" + key + "/",
	} {
		got := Redact(in)
		if strings.Contains(got, key) || strings.Contains(got, url.QueryEscape(key)) || strings.Contains(got, "\\u0026Key") {
			t.Errorf("Redact(%q) = %q still holds the key", in, got)
		}
		if !strings.Contains(got, "REDACTED") {
			t.Errorf("Redact(%q) = %q: nothing replaced", in, got)
		}
	}
	if got := Redact(string(quoted)); !json.Valid([]byte(got)) {
		t.Errorf("Redact(%s) = %s is no longer JSON", quoted, got)
	}
}

func TestSecretSetSkipsKeysTooShortToReplaceSafely(t *testing.T) {
	var s secretSet
	s.add("u0026")
	if got := s.replace(`"a\u0026b"`); got != `"a\u0026b"` {
		t.Errorf("a 5-character key was replaced bare: %q", got)
	}
	s.add("abcdef")
	s.add("abcdefgh")
	if got := s.replace("xabcdefghx abcdefx"); got != "xREDACTEDx REDACTEDx" {
		t.Errorf("replace = %q, want the longest form replaced whole", got)
	}
}

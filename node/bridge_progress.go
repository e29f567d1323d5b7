package node

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vcpnode/vcpnode/bridge"
	"github.com/vcpnode/vcpnode/internal/humantext"
)

// progressTextMost bounds a progress event's text.
const progressTextMost = 300

// progressText says a server tool's progress event in a few words: the
// task accepted, or the server event's content, message or status (the
// fields VCP plugins fill in their log events), else the event, clipped.
func progressText(p bridge.Progress) string {
	var ev map[string]json.RawMessage
	_ = json.Unmarshal(p.Data, &ev)
	field := func(name string) string {
		var s string
		if json.Unmarshal(ev[name], &s) == nil {
			return strings.TrimSpace(s)
		}
		return ""
	}
	if p.Kind == bridge.KindDropped {
		return fmt.Sprintf("%d progress updates dropped: the node was busy when they came", p.Dropped)
	}
	if p.Kind == "accepted" {
		text := "the server started task " + p.TaskID
		if m := field("message"); m != "" {
			text += ": " + m
		}
		return text
	}
	for _, name := range []string{"content", "message", "status"} {
		if s := field(name); s != "" {
			return humantext.Clip(s, progressTextMost)
		}
	}
	return humantext.Clip(string(p.Data), progressTextMost)
}

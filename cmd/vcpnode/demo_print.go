package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// demoPrinter serialises the demo's lines with the hub's frame callbacks.
type demoPrinter struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *demoPrinter) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format, args...)
}

func (p *demoPrinter) line(s string) { p.printf("%s\n", s) }

// describeFrame is one aligned line per frame; payloads are summarised
// (file data by size and type, never its base64).
func describeFrame(f demohub.Frame) string {
	arrow := "hub ← node"
	if f.Dir == demohub.ToNode {
		arrow = "hub → node"
	}
	if f.Msg == nil {
		return fmt.Sprintf("  %s  %-14s  %d bytes that do not decode: %s", arrow, "(malformed)", len(f.Raw), clip(fmt.Sprint(f.Err)))
	}
	return fmt.Sprintf("  %s  %-14s  %s", arrow, f.Msg.MessageType(), describeMessage(f.Msg))
}

func describeMessage(m wsproto.Message) string {
	switch m := m.(type) {
	case wsproto.ConnectionAck:
		return fmt.Sprintf("serverId=%s clientId=%s", m.ServerID, m.ClientID)
	case wsproto.RegisterTools:
		return fmt.Sprintf("serverName=%s tools=%v cancelTool=%t", m.ServerName, registeredNames(m), m.Capabilities.CancelTool)
	case wsproto.ReportIP:
		s := fmt.Sprintf("serverName=%s localIPs=%v", m.ServerName, m.LocalIPs)
		if m.PublicIP != "" {
			s += " publicIP=" + m.PublicIP
		}
		return s
	case wsproto.UpdateStaticPlaceholders:
		return fmt.Sprintf("serverName=%s %d placeholder(s)", m.ServerName, len(m.Placeholders))
	case wsproto.ExecuteTool:
		return fmt.Sprintf("%s requestId=%s args=%s", m.ToolName, m.RequestID, clip(compactJSON(m.ToolArgs)))
	case wsproto.ToolResult:
		if m.Status == wsproto.StatusError {
			return fmt.Sprintf("%s error: %s", m.RequestID, clip(m.Error))
		}
		return fmt.Sprintf("%s %s: %s", m.RequestID, m.Status, summarizeResult(m.Result))
	case wsproto.CancelTool:
		return "requestId=" + m.RequestID
	case wsproto.PluginCallbackForward:
		return describeCallback(m)
	case wsproto.Unknown:
		return fmt.Sprintf("%d bytes of data", len(m.Data))
	}
	return fmt.Sprintf("%T", m)
}

// registeredNames lists the names in a register_tools' manifests, sorted.
func registeredNames(m wsproto.RegisterTools) []string {
	names := make([]string, 0, len(m.Tools))
	for _, raw := range m.Tools {
		var manifest struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(raw, &manifest); err != nil || manifest.Name == "" {
			manifest.Name = "(unnamed)"
		}
		names = append(names, manifest.Name)
	}
	slices.Sort(names)
	return names
}

// summarizeResult shows a file as its size and type, content as its first
// text part, anything else as clipped JSON.
func summarizeResult(raw json.RawMessage) string {
	var r struct {
		FileData *string                `json:"fileData"`
		MimeType string                 `json:"mimeType"`
		Content  []toolhost.ContentPart `json:"content"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return clip(string(raw))
	}
	switch {
	case r.FileData != nil:
		data, err := base64.StdEncoding.DecodeString(*r.FileData)
		if err != nil {
			return fmt.Sprintf("fileData of %d characters that is not base64", len(*r.FileData))
		}
		return fmt.Sprintf("file of %d bytes, %s (base64 not shown)", len(data), r.MimeType)
	case len(r.Content) > 0:
		s := clip(r.Content[0].Text)
		if r.Content[0].Type != "text" {
			s = "a " + r.Content[0].Type + " part"
		}
		if more := len(r.Content) - 1; more > 0 {
			s += fmt.Sprintf(" (+%d more part(s))", more)
		}
		return s
	}
	return clip(compactJSON(raw))
}

// compactJSON marshals v on one line, keeping <, > and & as they are.
func compactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	return strings.TrimSpace(b.String())
}

// clip puts s on one line (line breaks shown as ⏎) and cuts it to clipRunes.
func clip(s string) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ⏎ ")), " ")
	if utf8.RuneCountInString(s) <= clipRunes {
		return s
	}
	return string([]rune(s)[:clipRunes]) + "…"
}

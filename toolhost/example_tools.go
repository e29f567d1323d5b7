package toolhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Small in-process tools for checking a node end to end (`vcpnode demo`,
// `vcpnode call`, tests). Both are built-in, so the server sees them only
// when the config names them.

const (
	echoName     = "Echo"
	nodeInfoName = "NodeInfo"
	// maxEchoDelay bounds Echo's delay argument; the call's deadline usually ends it sooner.
	maxEchoDelay = time.Hour
)

type echoTool struct{}

// NewEchoTool returns "Echo", which answers with its arguments as text. Its
// optional delay and fail arguments exercise timeouts, cancel_tool and
// error results without writing a plugin.
func NewEchoTool() Tool { return echoTool{} }

func (echoTool) Spec() Spec {
	return Spec{
		Name:        echoName,
		DisplayName: "Echo (node check)",
		Version:     "1.0.0",
		Description: "Answers with its own arguments as text, to check that calls reach this node and come back.",
		Commands: []Command{{
			Command: echoName,
			Description: "Repeats every argument back as text, one per line, with the name of the machine that answered.\n" +
				"Parameters: message (string, optional): any text to repeat.\n" +
				"delay (string, optional): wait this long before answering, e.g. \"5s\"; a timed-out or cancelled call stops waiting.\n" +
				"fail (string, optional): answer with this text as an error instead, to check error handling.",
			Example: "<<<[TOOL_REQUEST]>>>\ntool_name:「始」Echo「末」,\nmessage:「始」hello from the main server「末」\n<<<[END_TOOL_REQUEST]>>>",
		}},
		Source:             "builtin",
		Builtin:            true,
		DistributedExposed: true,
	}
}

func (echoTool) Invoke(ctx context.Context, call Call) (any, error) {
	if raw, ok := call.Args["delay"]; ok {
		delay, err := parseDelay(raw)
		if err != nil {
			return nil, err
		}
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, fmt.Errorf("echo stopped waiting: %w", context.Cause(ctx))
		}
	}
	if raw, ok := call.Args["fail"]; ok {
		return nil, errors.New(argText(raw))
	}
	host, err := os.Hostname()
	if err != nil {
		host = "an unnamed host"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "echo from %s (request %s)", host, call.RequestID)
	if len(call.Args) == 0 {
		b.WriteString("\nno arguments")
	}
	for _, k := range argNames(call.Args) {
		fmt.Fprintf(&b, "\n%s: %s", k, argText(call.Args[k]))
	}
	if len(call.Context) > 0 {
		fmt.Fprintf(&b, "\n_vcpContext: %d bytes", len(call.Context))
	}
	return b.String(), nil
}

// argText shows a JSON string without its quotes and anything else as compact JSON.
func argText(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	return buf.String()
}

// parseDelay accepts a Go duration ("1.5s", "2m") or a number of seconds,
// given as a JSON string (as the server sends every argument) or a number.
func parseDelay(raw json.RawMessage) (time.Duration, error) {
	text := strings.TrimSpace(argText(raw))
	d, err := time.ParseDuration(text)
	if err != nil {
		secs, ferr := strconv.ParseFloat(text, 64)
		if ferr != nil {
			return 0, fmt.Errorf("delay %q is not a duration: write it like \"5s\" or \"1m\"", text)
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d < 0 || d > maxEchoDelay {
		return 0, fmt.Errorf("delay %q is out of range: use 0s to %s", text, maxEchoDelay)
	}
	return d, nil
}

type nodeInfoTool struct{ start time.Time }

// NewSystemInfoTool returns "NodeInfo", which describes the machine and the
// daemon: host name, OS and architecture, CPUs, Go version, process id and
// uptime since start.
func NewSystemInfoTool(start time.Time) Tool { return nodeInfoTool{start: start} }

func (nodeInfoTool) Spec() Spec {
	return Spec{
		Name:        nodeInfoName,
		DisplayName: "Node info",
		Version:     "1.0.0",
		Description: "Describes the machine this node runs on and how long the node has been up.",
		Commands: []Command{{
			Command:     nodeInfoName,
			Description: "Reports the host name, operating system, architecture, CPU count, Go version, process id and uptime of this node. Takes no parameters.",
			Example:     "<<<[TOOL_REQUEST]>>>\ntool_name:「始」NodeInfo「末」\n<<<[END_TOOL_REQUEST]>>>",
		}},
		Timeout:            10 * time.Second,
		Source:             "builtin",
		Builtin:            true,
		DistributedExposed: true,
	}
}

// NodeInfo is the structured part of NodeInfo's result, next to the text
// part the model reads; programmatic callers (/v1/human/tool) get both.
type NodeInfo struct {
	Content       []ContentPart `json:"content"`
	Hostname      string        `json:"hostname"`
	OS            string        `json:"os"`
	Arch          string        `json:"arch"`
	CPUs          int           `json:"cpus"`
	GoVersion     string        `json:"goVersion"`
	PID           int           `json:"pid"`
	UptimeSeconds int64         `json:"uptimeSeconds"`
}

func (t nodeInfoTool) Invoke(context.Context, Call) (any, error) {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown (" + err.Error() + ")"
	}
	uptime := max(time.Since(t.start), 0).Round(time.Second)
	info := NodeInfo{
		Hostname:      host,
		OS:            runtime.GOOS,
		Arch:          runtime.GOARCH,
		CPUs:          runtime.NumCPU(),
		GoVersion:     runtime.Version(),
		PID:           os.Getpid(),
		UptimeSeconds: int64(uptime / time.Second),
	}
	text := fmt.Sprintf("host: %s\nsystem: %s/%s, %d CPUs\nGo: %s\nnode process: pid %d, up %s",
		info.Hostname, info.OS, info.Arch, info.CPUs, info.GoVersion, info.PID, uptime)
	info.Content = []ContentPart{{Type: "text", Text: text}}
	return info, nil
}

package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// newProbeServer is the test server with two more tools, for the sandbox
// tests: dial connects to a TCP address, read reads a file; a failure is
// an error result with the error's text.
func newProbeServer() *sdk.Server {
	srv := newTestServer("probe")
	schema := func(arg string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{"` + arg + `":{"type":"string"}},"required":["` + arg + `"]}`)
	}
	failed := func(err error) *sdk.CallToolResult {
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}
	}
	srv.AddTool(&sdk.Tool{Name: "dial", Description: "Connects to addr over TCP.", InputSchema: schema("addr")},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args struct{ Addr string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			c, err := net.DialTimeout("tcp", args.Addr, 30*time.Second)
			if err != nil {
				return failed(err), nil
			}
			c.Close()
			return textResult("connected"), nil
		})
	srv.AddTool(&sdk.Tool{Name: "read", Description: "Reads the file at path.", InputSchema: schema("path")},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args struct{ Path string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			b, err := os.ReadFile(args.Path)
			if err != nil {
				return failed(err), nil
			}
			return textResult(string(b)), nil
		})
	srv.AddTool(&sdk.Tool{Name: "alloc", Description: "Allocates and touches mib MiB.", InputSchema: schema("mib")},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args struct{ Mib string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			n, _ := strconv.Atoi(args.Mib)
			held := make([][]byte, 0, n)
			for range n {
				b := make([]byte, 1<<20)
				for i := 0; i < len(b); i += 4096 {
					b[i] = 1
				}
				held = append(held, b)
			}
			return textResult(strconv.Itoa(len(held))), nil
		})
	srv.AddTool(&sdk.Tool{Name: "fds", Description: "Lists the fds it inherited (those not close-on-exec).", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return textResult(inheritedFds()), nil
		})
	return srv
}

// inheritedFds lists, in order, the fds of this process that are not
// close-on-exec (/proc's fdinfo flags): those it inherited, as the
// runtime opens its own close-on-exec.
func inheritedFds() string {
	ents, err := os.ReadDir("/proc/self/fdinfo")
	if err != nil {
		return err.Error()
	}
	var fds []int
	for _, ent := range ents {
		fd, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		info, err := os.ReadFile("/proc/self/fdinfo/" + ent.Name())
		if err != nil {
			continue // the directory read's own fd, closed since
		}
		for _, line := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(line, "flags:"); ok {
				if flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64); err == nil && flags&0o2000000 == 0 {
					fds = append(fds, fd)
				}
			}
		}
	}
	slices.Sort(fds)
	return fmt.Sprint(fds)
}

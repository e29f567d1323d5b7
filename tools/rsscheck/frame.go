package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// sinkTool answers with the length of its "blob" argument: the frame is
// read and decoded and the argument reaches a tool, but nothing is copied
// on the way back.
type sinkTool struct{}

func (sinkTool) Spec() toolhost.Spec {
	return toolhost.Spec{Name: "Sink", Description: "measures its blob argument", Timeout: time.Minute,
		Source: "rsscheck", DistributedExposed: true}
}

func (sinkTool) Invoke(_ context.Context, call toolhost.Call) (any, error) {
	return strconv.Itoa(len(call.Args["blob"])), nil
}

// measureFrames sends one execute_tool of each size (MiB) to a node in its
// own process and reads its peak resident memory (VmHWM, reset before each
// frame through /proc/<pid>/clear_refs) once the result is back.
func measureFrames(sizes []int) error {
	return inChild("node package, one execute_tool per size", []string{"-tools", "0", "-sink"}, func(hub *demohub.Hub, c *child) (string, error) {
		pid := c.cmd.Process.Pid
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		conn, _, err := registered(ctx, hub)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		for _, size := range sizes {
			if _, err := fmt.Fprintln(c.stdin, settleLine); err != nil {
				return "", err
			}
			if _, err := c.stdout.ReadString('\n'); err != nil {
				return "", err
			}
			if err := resetPeak(pid); err != nil {
				return "", err
			}
			before, err := readProcStatus(pid)
			if err != nil {
				return "", err
			}
			n := size << 20
			blob := make([]byte, 0, n+2)
			blob = append(append(append(blob, '"'), strings.Repeat("x", n)...), '"')
			call := wsproto.ExecuteTool{RequestID: "rss-" + strconv.Itoa(size), ToolName: "Sink",
				ToolArgs: map[string]json.RawMessage{"blob": blob}}
			frame, err := wsproto.Encode(call)
			if err != nil {
				return "", err
			}
			res, err := conn.CallExecute(ctx, call)
			if err != nil {
				return "", err
			}
			if res.Status != wsproto.StatusSuccess {
				return "", fmt.Errorf("%d MiB call: %s", size, res.Error)
			}
			after, err := readProcStatus(pid)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "frame %6.1f MiB: VmRSS before %5.1f MiB, peak (VmHWM) %6.1f MiB = %.2f x frame; after %6.1f MiB\n",
				mib(int64(len(frame))), mib(before.RSS), mib(after.HWM), float64(after.HWM)/float64(len(frame)), mib(after.RSS))
		}
		return b.String(), nil
	})
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("-frames %q: want comma-separated sizes in MiB", s)
		}
		out = append(out, n)
	}
	return out, nil
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/toolhost/files"
	"github.com/vcpnode/vcpnode/wsproto"
)

// measureFiles has the node serve n files of size bytes at once through
// internal_request_file, reads its peak resident memory, then samples its
// resident memory every second while it sits idle.
func measureFiles(n, size int, memLimit int64, idle time.Duration) error {
	dir, err := os.MkdirTemp("", "rsscheck-files-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	content := []byte(strings.Repeat("0123456789abcdef", size/16))
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.bin", i)), content, 0o644); err != nil {
			return err
		}
	}
	args := []string{"-tools", "0", "-childfiles", dir, "-memlimit", strconv.FormatInt(memLimit, 10), "-concurrent", strconv.Itoa(n)}
	return inChild("node package serving files", args, func(hub *demohub.Hub, c *child) (string, error) {
		pid := c.cmd.Process.Pid
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		conn, _, err := registered(ctx, hub)
		if err != nil {
			return "", err
		}
		before, err := readProcStatus(pid)
		if err != nil {
			return "", err
		}
		if err := resetPeak(pid); err != nil {
			return "", err
		}
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			u := (&url.URL{Scheme: "file", Path: filepath.Join(dir, fmt.Sprintf("f%03d.bin", i))}).String()
			arg, _ := json.Marshal(u)
			wg.Go(func() {
				res, err := conn.CallExecute(ctx, wsproto.ExecuteTool{RequestID: fmt.Sprintf("file-%d", i),
					ToolName: files.ToolName, ToolArgs: map[string]json.RawMessage{"fileUrl": arg}})
				if err == nil && res.Status != wsproto.StatusSuccess {
					err = fmt.Errorf("file %d: %s", i, res.Error)
				}
				if err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			return "", err
		}
		done, err := readProcStatus(pid)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%d files of %.1f MiB served at once (memory_limit %d): VmRSS before %.1f MiB, peak (VmHWM) %.1f MiB, just after %.1f MiB\n",
			n, float64(size)/(1<<20), memLimit, mib(before.RSS), mib(done.HWM), mib(done.RSS))
		start, below := time.Now(), time.Duration(-1)
		fmt.Fprintf(&b, "idle:")
		for t := time.Second; t <= idle; t += time.Second {
			// A measurement, not a synchronisation: the node sits idle.
			time.Sleep(time.Until(start.Add(t)))
			st, err := readProcStatus(pid)
			if err != nil {
				return "", err
			}
			if below < 0 && st.RSS < 25<<20 {
				below = t
			}
			if t%(5*time.Second) == 0 {
				fmt.Fprintf(&b, " %ds %.1f MiB;", int(t/time.Second), mib(st.RSS))
			}
		}
		if below >= 0 {
			fmt.Fprintf(&b, "\nunder 25 MiB after %v idle\n", below)
		} else {
			fmt.Fprintf(&b, "\nnot under 25 MiB within %v idle\n", idle)
		}
		return b.String(), nil
	})
}

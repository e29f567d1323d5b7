//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/wsproto"
)

// tally counts what became of the calls the driver made.
type tally struct {
	mu          sync.Mutex
	made        int
	answered    int
	failed      map[string]int // error result, by reason
	endedWith   int            // their connection ended before a result
	cancelled   int            // cancelled, and no result came (none is owed)
	lost        int            // no result on an open connection
	notReady    int            // ticks skipped: no registered connection
	byKind      map[string]int
	largeSent   int
	filesServed int
}

func newTally() *tally { return &tally{failed: map[string]int{}, byKind: map[string]int{}} }

var digits = regexp.MustCompile(`[0-9]+`)

// reason groups error texts: numbers and ids vary from call to call.
func reason(s string) string {
	s = digits.ReplaceAllString(s, "#")
	if len(s) > 70 {
		s = s[:70] + "…"
	}
	return s
}

// driver makes a steady mix of calls on the registered connection.
type driver struct {
	r      *rig
	rng    *rand.Rand
	t      *tally
	paused atomic.Int32 // calls are made only at zero; each pauser adds one
	seq    atomic.Int64
	wg     sync.WaitGroup
	sem    chan struct{}
	large  string // 1 MiB of payload
	kinds  []callKind
	hangs  sync.Map // requestId → *demohub.Conn, for the hanging-plugin fault
}

type callKind struct {
	name   string
	weight int
}

func newDriver(r *rig, seed uint64, t *tally) *driver {
	d := &driver{r: r, rng: rand.New(rand.NewPCG(seed, 2)), t: t, sem: make(chan struct{}, 24)}
	var b strings.Builder
	for b.Len() < 1<<20 {
		b.WriteString("the quick brown fox jumps over the lazy dog 0123456789 ")
	}
	d.large = b.String()[:1<<20]
	d.kinds = []callKind{{"small", 40}, {"large", 6}, {"file", 12}, {"async", 14}, {"mcp", 8}, {"hang", 5}}
	if r.nodeJ != "" {
		d.kinds = append(d.kinds, callKind{"direct", 8})
	}
	return d
}

func (d *driver) pick() string {
	total := 0
	for _, k := range d.kinds {
		total += k.weight
	}
	n := d.rng.IntN(total)
	for _, k := range d.kinds {
		if n < k.weight {
			return k.name
		}
		n -= k.weight
	}
	return d.kinds[0].name
}

// run makes calls until ctx ends; it waits for its calls before returning.
func (d *driver) run(ctx context.Context) {
	defer d.wg.Wait()
	for {
		gap := time.Duration(40+d.rng.IntN(160)) * time.Millisecond
		select {
		case <-ctx.Done():
			return
		case <-time.After(gap):
		}
		kind := d.pick() // drawn every tick, so the mix follows the seed
		if d.paused.Load() > 0 {
			continue
		}
		conn := d.conn()
		if conn == nil {
			d.t.mu.Lock()
			d.t.notReady++
			d.t.mu.Unlock()
			continue
		}
		select {
		case d.sem <- struct{}{}:
		default:
			continue // enough in flight; the node's own queue is not what is tested
		}
		n := d.seq.Add(1)
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			defer func() { <-d.sem }()
			d.call(conn, kind, n, kind == "hang")
		}()
	}
}

// conn is the newest open connection that has registered.
func (d *driver) conn() *demohub.Conn {
	id, ok := d.r.rec.registeredConn()
	if !ok {
		return nil
	}
	for _, c := range d.r.hub.Conns() {
		if c.ID() == id {
			return c
		}
	}
	return nil
}

// request builds the execute_tool for kind and what its result must hold.
func (d *driver) request(kind string, n int64) (wsproto.ExecuteTool, func(json.RawMessage) error) {
	ns := strconv.FormatInt(n, 10)
	args := map[string]any{"n": ns}
	tool := ""
	want := ""
	switch kind {
	case "small", "large", "hang":
		tool = "SoakSync"
		payload := "small payload " + ns
		if kind == "large" {
			payload = ns + d.large
		}
		args["command"], args["payload"] = "echo", payload
		if kind == "hang" {
			args["command"] = "hang"
		}
		want = digest(ns, payload)
	case "async":
		tool, args["command"], want = "SoakAsync", "submit", "accepted t"+ns
	case "mcp":
		tool, args["command"], want = "McpSoak", "echo", "mcp "+ns
	case "direct":
		tool, args["command"], want = "SoakDirect", "echo", "direct "+ns
	case "file":
		names := []string{"small.txt", "medium.bin", "large.bin"}
		name := names[int(n)%len(names)]
		tool = "internal_request_file"
		args = map[string]any{"fileUrl": "file://" + filepath.Join(d.r.filesDir, name)}
		return wsproto.ExecuteTool{RequestID: "soak-" + ns, ToolName: tool, ToolArgs: rawArgs(args)}, func(res json.RawMessage) error {
			return checkFile(res, fileContent(name, soakFiles[name]))
		}
	}
	return wsproto.ExecuteTool{RequestID: "soak-" + ns, ToolName: tool, ToolArgs: rawArgs(args)}, func(res json.RawMessage) error {
		if !bytes.Contains(res, []byte(want)) {
			return fmt.Errorf("result does not hold %q: %s", want, clipText(string(res)))
		}
		return nil
	}
}

// rawArgs encodes every argument (strings, all of them).
func rawArgs(args map[string]any) map[string]json.RawMessage {
	raw := make(map[string]json.RawMessage, len(args))
	for k, v := range args {
		raw[k], _ = json.Marshal(v)
	}
	return raw
}

func checkFile(res json.RawMessage, want []byte) error {
	var r struct {
		Status   string `json:"status"`
		FileData string `json:"fileData"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return fmt.Errorf("file result does not decode: %w", err)
	}
	got, err := base64.StdEncoding.DecodeString(r.FileData)
	if err != nil || r.Status != "success" || !bytes.Equal(got, want) {
		return fmt.Errorf("file result is not the file (status %q, %d bytes, want %d)", r.Status, len(got), len(want))
	}
	return nil
}

// call makes one call and counts its fate. A hanging call is cancelled
// after a moment unless the hanging-plugin fault holds it (held).
func (d *driver) call(conn *demohub.Conn, kind string, n int64, cancelSoon bool) {
	req, check := d.request(kind, n)
	d.t.mu.Lock()
	d.t.made++
	d.t.byKind[kind]++
	d.t.mu.Unlock()
	limit := d.r.opts.callTimeout + d.r.opts.slack
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cancelled := atomic.Bool{}
	if kind == "hang" {
		if cancelSoon {
			wait := time.Duration(300+int(n%1700)) * time.Millisecond
			stop := time.AfterFunc(wait, func() { d.cancel(conn, req.RequestID, &cancelled) })
			defer stop.Stop()
		} else {
			d.hangs.Store(req.RequestID, conn)
			defer d.hangs.Delete(req.RequestID)
		}
	}
	res, err := conn.CallExecute(ctx, req)
	d.t.mu.Lock()
	defer d.t.mu.Unlock()
	switch {
	case err == nil && res.Status == wsproto.StatusSuccess:
		if kind == "hang" {
			d.r.rec.violate("a hanging call answered success", req.RequestID, conn.ID())
			return
		}
		if cerr := check(res.Result); cerr != nil {
			d.r.rec.violate("wrong result: "+cerr.Error(), req.RequestID, conn.ID())
			return
		}
		d.t.answered++
		if kind == "file" {
			d.t.filesServed++
		}
	case err == nil && strings.Contains(res.Error, "refused by the node's sandbox"):
		// The soak's profile grants what its plugins need: a refusal is a
		// broken confinement rule, not a fault the soak injected.
		d.r.rec.violate("refused by the sandbox: "+reason(res.Error), req.RequestID, conn.ID())
	case err == nil:
		d.t.failed[reason(res.Error)]++
	case errors.Is(err, demohub.ErrConnClosed):
		d.t.endedWith++
	case cancelled.Load() || kind == "hang":
		d.t.cancelled++
	default:
		d.t.lost++ // the recorder names it as a violation
	}
}

// cancel sends cancel_tool, as the server does when its timer fires.
func (d *driver) cancel(conn *demohub.Conn, id string, done *atomic.Bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if conn.Send(ctx, wsproto.CancelTool{RequestID: id}) == nil {
		done.Store(true)
	}
}

// hang starts n calls of the hanging command that stay until cancelHung.
func (d *driver) hang(n int) {
	conn := d.conn()
	if conn == nil {
		return
	}
	for range n {
		id := d.seq.Add(1)
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.call(conn, "hang", id, false)
		}()
	}
}

// cancelHung cancels the calls hang started.
func (d *driver) cancelHung() {
	d.hangs.Range(func(k, v any) bool {
		var done atomic.Bool
		d.cancel(v.(*demohub.Conn), k.(string), &done)
		return true
	})
}

//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

func TestMain(m *testing.M) {
	if helperMode() { // the daemon runs this test binary as the soak's plugins
		os.Exit(0)
	}
	toxics.Register(dropResultType, new(dropResultToxic))
	os.Exit(m.Run())
}

// dropResultType is a broken path on purpose: on every connection after
// the first, the first successful tool_result the node writes never reaches the hub,
// while the connection stays up. It is what a node that loses a result
// after a reconnect looks like from the hub.
const dropResultType = "soak_test_drop_result"

type dropResultToxic struct{ links atomic.Int64 }

type dropState struct {
	active   bool // this link drops one result
	done     bool
	dropping bool // inside a fragmented message being dropped
	upgraded bool // the HTTP upgrade request has gone through
	buf      []byte
}

func (t *dropResultToxic) NewState() any { return &dropState{active: t.links.Add(1) > 1} }

func (t *dropResultToxic) Pipe(stub *toxics.ToxicStub) {
	st := stub.State.(*dropState)
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			if !st.active || (st.done && len(st.buf) == 0) {
				stub.Output <- c
				continue
			}
			if out := st.feed(c.Data); len(out) > 0 {
				stub.Output <- &stream.StreamChunk{Data: out, Timestamp: c.Timestamp}
			}
		}
	}
}

// feed takes bytes from the node and returns those to pass on: whole
// WebSocket frames (client frames are masked), minus the dropped message.
func (st *dropState) feed(data []byte) []byte {
	st.buf = append(st.buf, data...)
	var out []byte
	if !st.upgraded {
		end := bytes.Index(st.buf, []byte("\r\n\r\n"))
		if end < 0 {
			return nil
		}
		out = append(out, st.buf[:end+4]...)
		st.buf = st.buf[end+4:]
		st.upgraded = true
	}
	for len(st.buf) >= 2 {
		b0, b1 := st.buf[0], st.buf[1]
		hlen, plen := 2, int(b1&0x7f)
		switch plen {
		case 126:
			if len(st.buf) < 4 {
				return out
			}
			hlen, plen = 4, int(st.buf[2])<<8|int(st.buf[3])
		case 127:
			if len(st.buf) < 10 {
				return out
			}
			plen = 0
			for _, b := range st.buf[2:10] {
				plen = plen<<8 | int(b)
			}
			hlen = 10
		}
		var key []byte
		if b1&0x80 != 0 {
			if len(st.buf) < hlen+4 {
				return out
			}
			key = st.buf[hlen : hlen+4]
			hlen += 4
		}
		if len(st.buf) < hlen+plen {
			return out
		}
		frame := st.buf[:hlen+plen]
		st.buf = st.buf[hlen+plen:]
		opcode, fin := b0&0x0f, b0&0x80 != 0
		drop := false
		switch {
		case opcode == 0 && st.dropping:
			drop, st.dropping = true, !fin
		case opcode == 1 && !st.done:
			head := make([]byte, min(96, plen))
			for i := range head {
				head[i] = frame[hlen+i]
				if key != nil {
					head[i] ^= key[i%4]
				}
			}
			// A success: never the answer to a call the hub cancelled, which it
			// does not wait for.
			if bytes.Contains(head, []byte(`"tool_result"`)) && bytes.Contains(head, []byte(`"status":"success"`)) {
				drop, st.done, st.dropping = true, true, !fin
			}
		}
		if !drop {
			out = append(out, frame...)
		}
	}
	return out
}

// TestSoakReportsADroppedResult runs the quick soak with a path that loses
// one result after each reconnect, and checks that it fails with a report
// naming the seed, the lost call and its history.
func TestSoakReportsADroppedResult(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the soak builds and runs the daemon for about a minute")
	}
	var out bytes.Buffer
	o := options{
		seed: 11, duration: 4 * time.Second, quick: true, privileged: false,
		callTimeout: 5 * time.Second, slack: 10 * time.Second, settle: 60 * time.Second,
		only: map[string]bool{"hub-restart": true},
		out:  &out,
		breakProxy: func(p *toxiproxy.Proxy) {
			js := `{"name":"broken","type":"` + dropResultType + `","stream":"upstream","toxicity":1,"attributes":{}}`
			if _, err := p.Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
				t.Errorf("add the breaking toxic: %v", err)
			}
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := run(ctx, o)
	if err != nil {
		t.Fatalf("the soak could not run: %v\n%s", err, out.String())
	}
	if s.dir != "" {
		defer os.RemoveAll(s.dir) // kept for a violation; the test has read what it needs
	}
	if s.violation == nil {
		printFigures(&out, s)
		t.Fatalf("the soak passed with a path that drops a result after each reconnect:\n%s", out.String())
	}
	printViolation(&out, s)
	report := out.String()
	t.Logf("the report:\n%s", report)
	for _, want := range []string{
		"SOAK FAILED: no tool_result",
		"on a connection that is still open: lost",
		"seed 11; replay with: go run ./internal/soak -seed 11",
		"fault sequence",
		"execute_tool     conn=" + s.violation.Conn + " id=" + s.violation.Key,
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(report, "tool_result      conn="+s.violation.Conn+" id="+s.violation.Key+" ") {
		t.Errorf("the history shows a result for the call reported lost")
	}
}

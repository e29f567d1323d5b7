package demohub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// The observer channels beside the node endpoint, as VCPToolBox serves them:
// the same key check and failure mode, connection_ack without data,
// broadcasts, approval requests and answers, and the replay of missed
// VCPLog broadcasts to a device that reconnects.
const (
	ChannelVCPLog  = "VCPlog"
	ChannelVCPInfo = "vcpinfo"

	// DefaultApprovalTTL is the server's approval window when none is given.
	DefaultApprovalTTL = 5 * time.Minute
	// replayCacheSize is how many VCPLog broadcasts the server keeps for replay.
	replayCacheSize = 100
	replayCacheAge  = 24 * time.Hour
)

var ackMessages = map[string]string{
	ChannelVCPLog:  "WebSocket connection successful for VCPLog.",
	ChannelVCPInfo: "WebSocket connection successful for VCPInfo.",
}

// ObserverConn is one observer client as the hub sees it.
type ObserverConn struct {
	hub     *Hub
	ws      *websocket.Conn
	channel string
	device  string // deviceName, else the client's IP: the replay cache's key
	seq     uint64
	done    chan struct{}
	writeMu sync.Mutex
	noPong  atomic.Bool
	pings   atomic.Int64
}

// StopPonging makes the connection ignore the client's pings from now on,
// so only the client's liveness check can notice.
func (o *ObserverConn) StopPonging() { o.noPong.Store(true) }

// PingsReceived counts the client's pings, answered or not.
func (o *ObserverConn) PingsReceived() int { return int(o.pings.Load()) }

func (o *ObserverConn) onPing(data string) error {
	o.pings.Add(1)
	if !o.noPong.Load() {
		// A failed write shows on the read side; nothing to do here.
		_ = o.ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(defaultWriteTimeout))
	}
	return nil
}

// Channel is "VCPlog" or "vcpinfo".
func (o *ObserverConn) Channel() string { return o.channel }

// Device is the replay key: the deviceName query parameter, else the IP.
func (o *ObserverConn) Device() string { return o.device }

// Done is closed when the connection has ended.
func (o *ObserverConn) Done() <-chan struct{} { return o.done }

// Drop closes the TCP connection at once, without a close frame.
func (o *ObserverConn) Drop() { _ = o.ws.Close() }

func (o *ObserverConn) write(data []byte) error {
	o.writeMu.Lock()
	defer o.writeMu.Unlock()
	_ = o.ws.SetWriteDeadline(time.Now().Add(defaultWriteTimeout))
	return o.ws.WriteMessage(websocket.TextMessage, data)
}

// ObserverFrame is a data frame an observer client sent.
type ObserverFrame struct {
	Channel string
	Device  string
	Raw     []byte
}

// ApprovalRequest is what RequestApproval broadcasts.
type ApprovalRequest struct {
	ToolName string
	Maid     string
	Args     map[string]any
	// TTL is approvalTtlMs; zero means DefaultApprovalTTL.
	TTL time.Duration
}

// ApprovalAnswer is the first tool_approval_response for a request.
type ApprovalAnswer struct {
	Approved bool
	Reason   string
	Raw      []byte // the frame exactly as received
}

// ErrApprovalExpired is returned by WaitApprovalAnswer once the window passed.
var ErrApprovalExpired = errors.New("demohub: approval expired unanswered")

type fakeApproval struct {
	expires time.Time
	answer  *ApprovalAnswer
	expired bool
}

type cachedBroadcast struct {
	seq        uint64
	at         time.Time
	data       []byte
	approvalID string
}

// observerState is the hub's observer side, guarded by Hub.mu.
type observerState struct {
	conns     map[*ObserverConn]struct{}
	acceptQ   map[string][]*ObserverConn
	cache     []cachedBroadcast
	seq       uint64
	devices   map[string]uint64 // device → last VCPLog broadcast written to it
	approvals map[string]*fakeApproval
	frames    []ObserverFrame
	approvalN uint64
	replays   int
}

func (s *observerState) init() {
	if s.conns == nil {
		s.conns = map[*ObserverConn]struct{}{}
		s.acceptQ = map[string][]*ObserverConn{}
		s.devices = map[string]uint64{}
		s.approvals = map[string]*fakeApproval{}
	}
}

// observerChannel tells which observer endpoint a request targets.
func observerChannel(uri string) (channel, key string, ok bool) {
	path, _, _ := strings.Cut(uri, "?")
	path = strings.ReplaceAll(path, `\`, "/")
	for _, ch := range []string{ChannelVCPLog, ChannelVCPInfo} {
		if k, found := strings.CutPrefix(path, "/"+ch+"/VCP_Key="); found {
			if k == "" || strings.ContainsAny(k, "\r\n\u2028\u2029") {
				return "", "", false
			}
			return ch, k, true
		}
	}
	return "", "", false
}

// deviceOf is the replay key the real server uses.
func deviceOf(r *http.Request) string {
	q := r.URL.Query()
	for _, k := range []string{"deviceName", "device_name", "devicename"} {
		if v := q.Get(k); v != "" {
			return v
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// handleObserver serves an upgrade to /VCPlog/ or /vcpinfo/; h.wg counts it.
func (h *Hub) handleObserver(w http.ResponseWriter, r *http.Request, channel string) {
	ws, err := h.upgrader.Upgrade(w, r, nil)
	if err != nil {
		h.logf("demohub: observer upgrade from %s failed: %v", r.RemoteAddr, err)
		return
	}
	ws.SetReadLimit(h.opts.ReadLimit)
	o := &ObserverConn{hub: h, ws: ws, channel: channel, device: deviceOf(r), done: make(chan struct{})}
	o.noPong.Store(h.opts.NoPong)
	ws.SetPingHandler(o.onPing)
	h.mu.Lock()
	if h.closed || h.srv == nil {
		h.mu.Unlock()
		_ = ws.Close()
		return
	}
	h.obs.init()
	o.seq = h.connSeq.Add(1)
	h.obs.conns[o] = struct{}{}
	h.okCount++
	lastSeen, known := h.obs.devices[o.device]
	upTo := h.obs.seq // later broadcasts reach it live
	if channel == ChannelVCPLog && !known {
		h.obs.devices[o.device] = h.obs.seq // from now on it is a known device
	}
	h.notifyLocked()
	h.mu.Unlock()

	ack, _ := json.Marshal(map[string]string{"type": "connection_ack", "message": ackMessages[channel]})
	if err := o.write(ack); err != nil {
		h.logf("demohub: observer %s: send connection_ack: %v", channel, err)
	}
	h.wg.Add(2)
	go o.readLoop()
	go func() {
		defer h.wg.Done()
		if channel == ChannelVCPLog && known {
			h.replay(o, lastSeen, upTo)
		}
	}()
	h.logf("demohub: observer connected to %s from %s", channel, r.RemoteAddr)
	h.mu.Lock()
	h.obs.acceptQ[channel] = append(h.obs.acceptQ[channel], o)
	h.notifyLocked()
	h.mu.Unlock()
}

func (o *ObserverConn) readLoop() {
	h := o.hub
	defer h.wg.Done()
	defer func() {
		_ = o.ws.Close()
		h.mu.Lock()
		delete(h.obs.conns, o)
		close(o.done)
		h.notifyLocked()
		h.mu.Unlock()
	}()
	for {
		_, data, err := o.ws.ReadMessage()
		if err != nil {
			return
		}
		h.mu.Lock()
		h.obs.frames = append(h.obs.frames, ObserverFrame{Channel: o.channel, Device: o.device, Raw: data})
		if o.channel == ChannelVCPLog {
			h.answerLocked(data)
		}
		h.notifyLocked()
		h.mu.Unlock()
	}
}

// answerLocked applies a tool_approval_response: the first answer to a
// pending request wins; later ones, unknown ids and expired requests are
// ignored without a reply, as the real server does.
func (h *Hub) answerLocked(data []byte) {
	var msg struct {
		Type string `json:"type"`
		Data struct {
			RequestID string `json:"requestId"`
			Approved  bool   `json:"approved"`
			Reason    string `json:"reason"`
		} `json:"data"`
	}
	if json.Unmarshal(data, &msg) != nil || msg.Type != "tool_approval_response" {
		return
	}
	a, ok := h.obs.approvals[msg.Data.RequestID]
	if !ok || a.answer != nil || a.expired {
		return
	}
	a.answer = &ApprovalAnswer{Approved: msg.Data.Approved, Reason: msg.Data.Reason, Raw: data}
}

// replay re-sends, after the device has stayed connected ReplayDelay, the
// VCPLog broadcasts it missed (ReplayOverlap more besides, to simulate the
// server's uncertainty about what reached a half-dead socket), one every
// ReplayInterval. Answered or expired approvals are not replayed.
func (h *Hub) replay(o *ObserverConn, lastSeen, upTo uint64) {
	select {
	case <-time.After(h.opts.ReplayDelay):
	case <-o.done:
		return
	}
	h.mu.Lock()
	var todo []cachedBroadcast
	start := -1
	for i, b := range h.obs.cache {
		if b.seq > lastSeen {
			start = i
			break
		}
	}
	if start < 0 {
		start = len(h.obs.cache)
	}
	start = max(0, start-h.opts.ReplayOverlap)
	for _, b := range h.obs.cache[start:] {
		if b.seq > upTo || time.Since(b.at) > replayCacheAge {
			continue
		}
		if a := h.obs.approvals[b.approvalID]; a != nil && (a.answer != nil || a.expired || time.Now().After(a.expires)) {
			continue
		}
		todo = append(todo, b)
	}
	h.mu.Unlock()
	for i, b := range todo {
		if i > 0 {
			select {
			case <-time.After(h.opts.ReplayInterval):
			case <-o.done:
				return
			}
		}
		if o.write(b.data) != nil {
			return
		}
		h.mu.Lock()
		h.obs.devices[o.device] = max(h.obs.devices[o.device], b.seq)
		h.notifyLocked()
		h.mu.Unlock()
	}
	h.mu.Lock()
	h.obs.replays++
	h.notifyLocked()
	h.mu.Unlock()
}

// AcceptObserver returns the next observer connection on channel.
func (h *Hub) AcceptObserver(ctx context.Context, channel string) (*ObserverConn, error) {
	var o *ObserverConn
	err := h.waitUntil(ctx, "an observer connection to "+channel, func() bool {
		q := h.obs.acceptQ[channel]
		if len(q) == 0 {
			return false
		}
		o, h.obs.acceptQ[channel] = q[0], q[1:]
		return true
	})
	return o, err
}

// Observers is a snapshot of the open observer connections on channel.
func (h *Hub) Observers(channel string) []*ObserverConn {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*ObserverConn
	for o := range h.obs.conns {
		if o.channel == channel {
			out = append(out, o)
		}
	}
	return out
}

// WaitReplays blocks until n replays have finished (each reconnect of a
// known device to VCPlog makes one, even an empty one).
func (h *Hub) WaitReplays(ctx context.Context, n int) error {
	return h.waitUntil(ctx, fmt.Sprintf("%d replays", n), func() bool { return h.obs.replays >= n })
}

// Broadcast writes data as is to every observer on channel; VCPLog
// broadcasts are also cached for replay. It returns how many clients got it.
func (h *Hub) Broadcast(channel string, data []byte) int {
	return h.broadcast(channel, data, "")
}

func (h *Hub) broadcast(channel string, data []byte, approvalID string) int {
	h.mu.Lock()
	h.obs.init()
	var seq uint64
	if channel == ChannelVCPLog {
		h.obs.seq++
		seq = h.obs.seq
		h.obs.cache = append(h.obs.cache, cachedBroadcast{seq: seq, at: time.Now(), data: data, approvalID: approvalID})
		if len(h.obs.cache) > replayCacheSize {
			h.obs.cache = h.obs.cache[len(h.obs.cache)-replayCacheSize:]
		}
	}
	var targets []*ObserverConn
	for o := range h.obs.conns {
		if o.channel == channel {
			targets = append(targets, o)
		}
	}
	h.mu.Unlock()
	sent := 0
	for _, o := range targets {
		if o.write(data) != nil {
			continue
		}
		sent++
		if seq > 0 {
			h.mu.Lock()
			h.obs.devices[o.device] = max(h.obs.devices[o.device], seq)
			h.mu.Unlock()
		}
	}
	return sent
}

// BroadcastJSON broadcasts {"type": typ, "data": data} on channel.
func (h *Hub) BroadcastJSON(channel, typ string, data any) (int, error) {
	raw, err := json.Marshal(map[string]any{"type": typ, "data": data})
	if err != nil {
		return 0, fmt.Errorf("demohub: encode %s: %w", typ, err)
	}
	return h.Broadcast(channel, raw), nil
}

// LogToolResult broadcasts a vcp_log as the server does when a call ends.
func (h *Hub) LogToolResult(tool, status, content string) int {
	n, _ := h.BroadcastJSON(ChannelVCPLog, "vcp_log", map[string]string{"tool_name": tool, "status": status, "content": content})
	return n
}

// RequestApproval broadcasts a tool_approval_request on VCPlog and returns
// its requestId. The request expires after its TTL.
func (h *Hub) RequestApproval(req ApprovalRequest) (string, error) {
	ttl := req.TTL
	if ttl <= 0 {
		ttl = DefaultApprovalTTL
	}
	now := time.Now()
	h.mu.Lock()
	h.obs.init()
	h.obs.approvalN++
	id := "approve-" + strconv.FormatInt(now.UnixMilli(), 10) + "-" + strconv.FormatUint(h.obs.approvalN, 36)
	h.obs.approvals[id] = &fakeApproval{expires: now.Add(ttl)}
	h.mu.Unlock()
	args := req.Args
	if args == nil {
		args = map[string]any{}
	}
	raw, err := json.Marshal(map[string]any{"type": "tool_approval_request", "data": map[string]any{
		"requestId": id, "toolName": req.ToolName, "maid": req.Maid, "args": args,
		"timestamp": now.UTC().Format("2006-01-02T15:04:05.000Z"), "approvalTtlMs": ttl.Milliseconds(),
	}})
	if err != nil {
		return "", fmt.Errorf("demohub: encode approval request: %w", err)
	}
	time.AfterFunc(ttl, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if a := h.obs.approvals[id]; a.answer == nil {
			a.expired = true
		}
		if !h.closed {
			h.notifyLocked()
		}
	})
	h.broadcast(ChannelVCPLog, raw, id)
	return id, nil
}

// WaitApprovalAnswer blocks until the request is answered (the first answer)
// or expires (ErrApprovalExpired).
func (h *Hub) WaitApprovalAnswer(ctx context.Context, id string) (ApprovalAnswer, error) {
	var ans ApprovalAnswer
	var expired bool
	err := h.waitUntil(ctx, "the answer to "+id, func() bool {
		a := h.obs.approvals[id]
		switch {
		case a == nil:
			return false
		case a.answer != nil:
			ans = *a.answer
			return true
		case a.expired:
			expired = true
			return true
		}
		return false
	})
	if err == nil && expired {
		err = ErrApprovalExpired
	}
	return ans, err
}

// ObserverFrames is every data frame observer clients sent, in order.
func (h *Hub) ObserverFrames() []ObserverFrame {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]ObserverFrame(nil), h.obs.frames...)
}

// WaitObserverFrames blocks until observer clients have sent at least n frames.
func (h *Hub) WaitObserverFrames(ctx context.Context, n int) ([]ObserverFrame, error) {
	var out []ObserverFrame
	err := h.waitUntil(ctx, fmt.Sprintf("%d observer frames", n), func() bool {
		if len(h.obs.frames) < n {
			return false
		}
		out = append(out, h.obs.frames...)
		return true
	})
	return out, err
}

func (h *Hub) liveObserversLocked() []*ObserverConn {
	out := make([]*ObserverConn, 0, len(h.obs.conns))
	for o := range h.obs.conns {
		out = append(out, o)
	}
	return out
}

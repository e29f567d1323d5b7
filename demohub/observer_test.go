package demohub

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

func observerURL(h *Hub, channel, key, device string) string {
	u := "ws://" + h.Addr() + "/" + channel + "/VCP_Key=" + key
	if device != "" {
		u += "?deviceName=" + device
	}
	return u
}

func dialObserver(t *testing.T, h *Hub, channel, device string) (*websocket.Conn, *ObserverConn) {
	t.Helper()
	ctx := testContext(t)
	ws, _, err := dialRaw(ctx, observerURL(h, channel, testKey, device))
	if err != nil {
		t.Fatalf("dial %s: %v", channel, err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	o, err := h.AcceptObserver(ctx, channel)
	if err != nil {
		t.Fatalf("AcceptObserver: %v", err)
	}
	return ws, o
}

func readJSON(t *testing.T, ws *websocket.Conn) map[string]any {
	t.Helper()
	_, data := readFrame(t, ws)
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("frame %q: %v", data, err)
	}
	return m
}

func TestObserverHandshakeAndAck(t *testing.T) {
	h := startHub(t, Options{})
	ctx := testContext(t)
	for _, bad := range []string{observerURL(h, ChannelVCPLog, "wrong", ""), "ws://" + h.Addr() + "/VCPLOG/VCP_Key=" + testKey} {
		_, resp, err := dialRaw(ctx, bad)
		if err == nil || resp != nil {
			t.Fatalf("dial with a bad key or path: err %v, resp %v; want the socket destroyed before any response", err, resp)
		}
	}
	for _, ch := range []string{ChannelVCPLog, ChannelVCPInfo} {
		ws, o := dialObserver(t, h, ch, "laptop")
		if o.Device() != "laptop" || o.Channel() != ch {
			t.Fatalf("device %q channel %q", o.Device(), o.Channel())
		}
		ack := readJSON(t, ws)
		if ack["type"] != "connection_ack" || !strings.Contains(ack["message"].(string), "successful for VCP") {
			t.Fatalf("ack %v", ack)
		}
		if _, ok := ack["data"]; ok {
			t.Fatalf("observer ack has data: %v", ack)
		}
	}
	if _, refused := h.Handshakes(); refused != 2 {
		t.Fatalf("refused %d, want 2", refused)
	}
}

func TestObserverBroadcastsAndApprovalAnswers(t *testing.T) {
	h := startHub(t, Options{})
	logWS, _ := dialObserver(t, h, ChannelVCPLog, "a")
	infoWS, _ := dialObserver(t, h, ChannelVCPInfo, "a")
	readJSON(t, logWS)
	readJSON(t, infoWS)
	if n := h.LogToolResult("Echo", "success", "hi"); n != 1 {
		t.Fatalf("vcp_log reached %d clients", n)
	}
	m := readJSON(t, logWS)
	if m["type"] != "vcp_log" || m["data"].(map[string]any)["tool_name"] != "Echo" {
		t.Fatalf("vcp_log %v", m)
	}
	if _, err := h.BroadcastJSON(ChannelVCPInfo, "plugin_status", map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
	if m := readJSON(t, infoWS); m["type"] != "plugin_status" {
		t.Fatalf("vcpinfo %v", m)
	}
	id, err := h.RequestApproval(ApprovalRequest{ToolName: "Shell", Maid: "Nova", Args: map[string]any{"cmd": "ls"}, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	req := readJSON(t, logWS)
	d := req["data"].(map[string]any)
	if req["type"] != "tool_approval_request" || d["requestId"] != id || d["approvalTtlMs"] != float64(60000) {
		t.Fatalf("approval request %v", req)
	}
	send := func(id string, ok bool, reason string) {
		raw, _ := json.Marshal(map[string]any{"type": "tool_approval_response", "data": map[string]any{"requestId": id, "approved": ok, "reason": reason}})
		if err := logWS.WriteMessage(websocket.TextMessage, raw); err != nil {
			t.Fatal(err)
		}
	}
	send("approve-unknown", true, "")
	send(id, false, "no")
	send(id, true, "") // too late: the first answer won
	ans, err := h.WaitApprovalAnswer(testContext(t), id)
	if err != nil || ans.Approved || ans.Reason != "no" {
		t.Fatalf("answer %+v, %v", ans, err)
	}
	if _, err := h.WaitObserverFrames(testContext(t), 3); err != nil {
		t.Fatal(err)
	}
	if a, _ := h.WaitApprovalAnswer(testContext(t), id); a.Reason != "no" {
		t.Fatalf("a later answer replaced the first: %+v", a)
	}

	exp, _ := h.RequestApproval(ApprovalRequest{ToolName: "Shell", TTL: 50 * time.Millisecond})
	if _, err := h.WaitApprovalAnswer(testContext(t), exp); !errors.Is(err, ErrApprovalExpired) {
		t.Fatalf("expired approval: %v", err)
	}
}

func TestObserverReplayAfterReconnect(t *testing.T) {
	h := startHub(t, Options{ReplayDelay: 10 * time.Millisecond, ReplayInterval: time.Millisecond, ReplayOverlap: 1})
	ws, o := dialObserver(t, h, ChannelVCPLog, "dev")
	readJSON(t, ws)
	h.LogToolResult("A", "success", "seen")
	readJSON(t, ws)
	o.Drop()
	<-o.Done()
	h.LogToolResult("B", "success", "missed")
	answered, _ := h.RequestApproval(ApprovalRequest{ToolName: "C", TTL: time.Minute})
	pending, _ := h.RequestApproval(ApprovalRequest{ToolName: "D", TTL: time.Minute})
	// Answer one approval from another client of another device.
	other, _ := dialObserver(t, h, ChannelVCPLog, "other")
	readJSON(t, other)
	raw, _ := json.Marshal(map[string]any{"type": "tool_approval_response", "data": map[string]any{"requestId": answered, "approved": true}})
	_ = other.WriteMessage(websocket.TextMessage, raw)
	if _, err := h.WaitApprovalAnswer(testContext(t), answered); err != nil {
		t.Fatal(err)
	}
	ws2, _ := dialObserver(t, h, ChannelVCPLog, "dev")
	readJSON(t, ws2)
	var got []string
	for range 3 { // A (overlap), B, D
		m := readJSON(t, ws2)
		d := m["data"].(map[string]any)
		if name, ok := d["tool_name"]; ok {
			got = append(got, name.(string))
		} else {
			got = append(got, d["toolName"].(string)+"/"+d["requestId"].(string))
		}
	}
	want := []string{"A", "B", "D/" + pending}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("replayed %v, want %v", got, want)
	}
	if err := h.WaitReplays(testContext(t), 1); err != nil {
		t.Fatal(err)
	}
}

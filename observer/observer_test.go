package observer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/toolhost"
)

func TestBadBroadcastsAreDroppedWithAWarning(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	h.acceptObserver(demohub.ChannelVCPLog)
	h.acceptObserver(demohub.ChannelVCPInfo)
	h.waitConnected(1)
	evs := h.eventStream(controlapi.EventFilter{})
	for range 20 {
		h.hub.Broadcast(demohub.ChannelVCPLog, []byte("{not json"))
	}
	h.hub.Broadcast(demohub.ChannelVCPLog, []byte(`{"type":"vcp_log","data":{"content":"`+strings.Repeat("x", 1<<20)+`"}}`))
	h.hub.LogToolResult("After", "success", "fine")
	if ev := h.nextEvent(evs); ev.Tool != "After" {
		t.Fatalf("first event after bad input %+v", ev)
	}
	h.waitLog("malformed observer broadcast")
	h.waitLog("observer broadcast too large: dropped")
	if n := strings.Count(h.logs.String(), "malformed observer broadcast"); n > toolhost.WarnBurst {
		t.Fatalf("%d malformed warnings: not rate-limited", n)
	}
	if st := h.set.Statuses(); st[0].Sessions != 1 {
		t.Fatalf("bad input cost the connection: %+v", st[0])
	}
}

func TestServerApprovalAnsweredRightAfterAReconnect(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	logConn := h.acceptObserver(demohub.ChannelVCPLog)
	h.acceptObserver(demohub.ChannelVCPInfo)
	h.waitConnected(1)
	evs := h.eventStream(controlapi.EventFilter{})
	id, err := h.hub.RequestApproval(demohub.ApprovalRequest{ToolName: "Shell", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if ev := h.nextEvent(evs); ev.Kind != controlapi.EventApprovalRequest || ev.RequestID != id {
		t.Fatalf("approval event %+v", ev)
	}
	logConn.Drop()
	h.acceptObserver(demohub.ChannelVCPLog)
	h.waitConnected(2)
	if _, err := h.set.Answer(id, true, ""); err != nil {
		t.Fatalf("answer once status shows the channel connected: %v", err)
	}
	if ans, err := h.hub.WaitApprovalAnswer(h.ctx, id); err != nil || !ans.Approved {
		t.Fatalf("hub got %+v, %v", ans, err)
	}
}

func TestReplayedBroadcastsAreNotShownTwice(t *testing.T) {
	h := startHarness(t, harnessOpt{hubOpts: demohub.Options{ReplayDelay: 20 * time.Millisecond, ReplayInterval: time.Millisecond, ReplayOverlap: 3}})
	logConn := h.acceptObserver(demohub.ChannelVCPLog)
	h.acceptObserver(demohub.ChannelVCPInfo)
	h.waitConnected(1)
	evs := h.eventStream(controlapi.EventFilter{Kinds: []string{controlapi.EventToolLog, controlapi.EventApprovalRequest}})

	h.hub.LogToolResult("Seen", "success", "once")
	answered, _ := h.hub.RequestApproval(demohub.ApprovalRequest{ToolName: "Answered", TTL: time.Minute})
	pending, _ := h.hub.RequestApproval(demohub.ApprovalRequest{ToolName: "Pending", TTL: time.Minute})
	for range 3 {
		h.nextEvent(evs)
	}
	if _, err := h.set.Answer(answered, true, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := h.hub.WaitApprovalAnswer(h.ctx, answered); err != nil {
		t.Fatal(err)
	}
	logConn.Drop()
	<-logConn.Done()
	h.hub.LogToolResult("Missed", "success", "while away")
	h.acceptObserver(demohub.ChannelVCPLog)
	if err := h.hub.WaitReplays(h.ctx, 1); err != nil {
		t.Fatal(err)
	}
	h.hub.LogToolResult("Live", "success", "after the replay")
	var got []string
	for {
		ev := h.nextEvent(evs)
		got = append(got, ev.Tool)
		if ev.Tool == "Live" {
			break
		}
	}
	if strings.Join(got, ",") != "Missed,Live" {
		t.Fatalf("after reconnect got %v, want the missed broadcast once and no replayed duplicates", got)
	}
	if list := h.set.Pending(); len(list) != 1 || list[0].RequestID != pending {
		t.Fatalf("approvals after replay %+v", list)
	}
}

func TestApprovalNotifiesWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "notified")
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$@\" > %q.tmp && mv %q.tmp %q\nexec sleep 20\n", out, out, out)
	if err := os.WriteFile(filepath.Join(dir, "notify-send"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	h := startHarness(t, harnessOpt{notify: true})
	h.acceptObserver(demohub.ChannelVCPLog)
	h.acceptObserver(demohub.ChannelVCPInfo)
	h.waitConnected(1)
	evs := h.eventStream(controlapi.EventFilter{})
	first, _ := h.hub.RequestApproval(demohub.ApprovalRequest{ToolName: "Shell", Maid: "Nova", TTL: time.Minute})
	// The first notifier hangs (sleep 20): the next approval still arrives at once.
	second, _ := h.hub.RequestApproval(demohub.ApprovalRequest{ToolName: "Shell", TTL: time.Minute})
	for _, id := range []string{first, second} {
		if ev := h.nextEvent(evs); ev.RequestID != id {
			t.Fatalf("event %+v, want %s", ev, id)
		}
	}
	for {
		data, err := os.ReadFile(out)
		if err == nil {
			if s := string(data); !strings.Contains(s, "Shell (asked by Nova)") || !strings.Contains(s, "vcpnode approve "+first) {
				t.Fatalf("notification said %q", s)
			}
			break
		}
		select {
		case <-h.ctx.Done():
			t.Fatal("notify-send never ran")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

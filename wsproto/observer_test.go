package wsproto

import (
	"encoding/json"
	"testing"
)

func TestApprovalResponseFrame(t *testing.T) {
	raw, err := EncodeApprovalResponse(ApprovalResponse{RequestID: "approve-1-x", Approved: false, Reason: "not now"})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"type":"tool_approval_response","data":{"requestId":"approve-1-x","approved":false,"reason":"not now"}}`
	if string(raw) != want {
		t.Fatalf("frame = %s\nwant    %s", raw, want)
	}
	var b Broadcast
	if err := json.Unmarshal(raw, &b); err != nil || b.Type != TypeToolApprovalResponse {
		t.Fatalf("read back as a broadcast: %+v, %v", b, err)
	}
}

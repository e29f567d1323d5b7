package main

import (
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/controlapi"
)

// status says how the key went and whether that way was remembered from
// an earlier run ([hub] auth = "auto" keeps it in the state directory).
func TestStatusSaysTheRememberedAuthWay(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		conn controlapi.ConnectionStatus
		want string
	}{
		{controlapi.ConnectionStatus{Auth: "path", AuthRemembered: true},
			"key sent  in the URL path (the server does not take the header); the way remembered from an earlier run"},
		{controlapi.ConnectionStatus{Auth: "header"}, "key sent  in the Authorization header, on the key-less path\n"},
		{controlapi.ConnectionStatus{Auth: "header", AuthRemembered: true},
			"key sent  in the Authorization header, on the key-less path; the way remembered from an earlier run"},
	} {
		tc.conn.Phase, tc.conn.Since = controlapi.PhaseConnected, now
		var b strings.Builder
		if err := printStatus(&b, controlapi.StatusResponse{Now: now, StartedAt: now, Connection: tc.conn}); err != nil {
			t.Fatal(err)
		}
		got := strings.Join(strings.Fields(b.String()), " ")
		if !strings.Contains(b.String(), "key sent") || !strings.Contains(got+" ", strings.Join(strings.Fields(tc.want), " ")+" ") {
			t.Errorf("%+v: status lacks %q:\n%s", tc.conn, tc.want, b.String())
		}
	}
}

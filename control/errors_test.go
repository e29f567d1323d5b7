package control_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/internal/nodetest"
)

// TestControlErrors: what the control API answers a request it cannot
// serve, over a whole node (nodetest): a wrong method, an unknown path or
// approval, a misspelt field, a reload without a config file.
func TestControlErrors(t *testing.T) {
	h := nodetest.Start(t, nodetest.Options{})
	_, client := h.Control("")
	tests := []struct {
		method, path string
		body         any
		status       int
		want         string
	}{
		{http.MethodGet, controlapi.PathReload, nil, http.StatusMethodNotAllowed, "/v1/reload needs POST, not GET"},
		{http.MethodPost, controlapi.PathStatus, nil, http.StatusMethodNotAllowed, "needs GET"},
		{http.MethodGet, "/v2/status", nil, http.StatusNotFound, "no such endpoint /v2/status"},
		{http.MethodPost, controlapi.PathApprovals + "/7/maybe", nil, http.StatusNotFound, "use …/approve or …/deny"},
		{http.MethodPost, controlapi.PathApprovals + "/7/approve", nil, http.StatusNotFound, `no pending approval with this id: "7"`},
		{http.MethodPost, controlapi.PathCall, map[string]any{"tool": "Echo", "argz": map[string]string{}}, http.StatusBadRequest, `unknown field "argz"`},
		{http.MethodPost, controlapi.PathReload, nil, http.StatusConflict, "not started from a config file"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			var out map[string]any
			err := client.Do(h.Ctx, tt.method, tt.path, tt.body, &out)
			var api *controlapi.APIError
			if !errors.As(err, &api) || api.Status != tt.status || !strings.Contains(api.Message, tt.want) {
				t.Fatalf("%s %s = %v, want HTTP %d %q", tt.method, tt.path, err, tt.status, tt.want)
			}
		})
	}
}

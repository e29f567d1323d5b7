package node

import (
	"context"
	"net/http"
)

// pathPlaceholders is GET /v1/placeholders: PlaceholdersResponse.
const pathPlaceholders = "/v1/placeholders"

func (s *ControlServer) handlePlaceholders(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.n.Placeholders())
}

// Placeholders lists the daemon's placeholders (GET /v1/placeholders).
func (c *ControlClient) Placeholders(ctx context.Context) (PlaceholdersResponse, error) {
	var out PlaceholdersResponse
	return out, c.do(ctx, http.MethodGet, pathPlaceholders, nil, &out)
}

package node

import (
	"net/http"
)

func (s *ControlServer) handlePlaceholders(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.n.Placeholders())
}

package control

import (
	"net/http"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost/textproto"
)

// handleParse is pure text work: nothing runs, so anyone the socket lets
// in may ask.
func (s *Server) handleParse(w http.ResponseWriter, r *http.Request) {
	var req controlapi.ParseRequest
	if err := decodeBody(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	res := textproto.Parse(req.Text, textproto.Options{Fuzzy: req.Fuzzy})
	if res.Calls == nil {
		res.Calls = []textproto.Call{}
	}
	if res.Rejected == nil {
		res.Rejected = []textproto.Rejected{}
	}
	writeJSON(w, http.StatusOK, res)
}

package node

import (
	"net/http"

	"github.com/vcpnode/vcpnode/toolhost/textproto"
)

// pathParse finds the tool calls in a model's reply, as `vcpnode parse`
// does; the console's Parser page runs them through /v1/call.
const pathParse = "/v1/parse"

// ParseRequest is POST /v1/parse.
type ParseRequest struct {
	Text string `json:"text"`
	// Fuzzy matches markers as the server does with fuzzy matching on.
	Fuzzy bool `json:"fuzzy,omitempty"`
}

// ParseResponse is what the reply held: textproto.Result.
type ParseResponse = textproto.Result

// handleParse is pure text work: nothing runs, so anyone the socket lets
// in may ask.
func (s *ControlServer) handleParse(w http.ResponseWriter, r *http.Request) {
	var req ParseRequest
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

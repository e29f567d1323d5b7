package control

import (
	"net/http"
	"time"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost/textproto"
)

// handleParse is pure text work: nothing runs, so anyone the socket lets
// in may ask.
func (s *Server) handleParse(w http.ResponseWriter, r *http.Request) {
	var req controlapi.ParseRequest
	if !readBody(w, r, &req) {
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

// handleResults is text work too: it writes answers the caller already has.
func (s *Server) handleResults(w http.ResponseWriter, r *http.Request) {
	var req controlapi.ResultsRequest
	if !readBody(w, r, &req) {
		return
	}
	results := make([]textproto.ToolResult, len(req.Results))
	for i, a := range req.Results {
		results[i] = a.ToolResult()
	}
	text, err := textproto.FormatResults(req.Format, results, time.Now())
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, http.StatusOK, controlapi.ResultsResponse{Format: req.Format, Text: text})
}

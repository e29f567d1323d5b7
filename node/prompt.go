package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/textproto"
)

// Prompt renders the exposed tools in format (textproto.PromptFormats):
// "vcp" from the very manifests register_tools sends, the others from the
// same tools' specs.
func (n *Node) Prompt(format string) (controlapi.PromptResponse, error) {
	if format == "" {
		format = textproto.PromptVCP
	}
	out := controlapi.PromptResponse{Format: format}
	switch format {
	case textproto.PromptVCP:
		raws, err := n.disp.Manifests()
		if err != nil {
			return out, err
		}
		manifests := make([]toolhost.Manifest, len(raws))
		for i, raw := range raws {
			if err := json.Unmarshal(raw, &manifests[i]); err != nil {
				return out, fmt.Errorf("read back manifest %d: %w", i, err)
			}
		}
		out.Tools, out.Text = len(manifests), textproto.VCPPrompt(manifests)
		return out, nil
	case textproto.PromptXML, textproto.PromptJSON:
		var specs []toolhost.Spec
		for _, t := range n.Tools() {
			if t.Exposure.Exposed && !t.Spec.Implicit {
				specs = append(specs, t.Spec)
			}
		}
		var err error
		if format == textproto.PromptXML {
			out.Text, err = textproto.FunctionsXML(specs)
		} else {
			out.Text, err = textproto.OpenAITools(specs)
		}
		out.Tools = len(specs)
		return out, err
	}
	return out, fmt.Errorf("%w: format %q is not one of %s", errBadPromptFormat, format, strings.Join(textproto.PromptFormats, ", "))
}

var errBadPromptFormat = errors.New("unknown prompt format")

func (s *ControlServer) handlePrompt(w http.ResponseWriter, r *http.Request) {
	format := r.URL.Query().Get("format")
	if format != "" && !slices.Contains(textproto.PromptFormats, format) {
		writeError(w, http.StatusBadRequest, fmt.Errorf("format %q is not one of %s", format, strings.Join(textproto.PromptFormats, ", ")))
		return
	}
	out, err := s.n.Prompt(format)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

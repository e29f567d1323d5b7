package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/textproto"
)

// Prompt renders the exposed tools in format (textproto.PromptFormats, or
// "json" for "openai"): "vcp" from the very manifests register_tools
// sends, the others from the same tools' specs.
func (n *Node) Prompt(format string) (controlapi.PromptResponse, error) {
	if format == "" {
		format = textproto.PromptVCP
	}
	canonical, ok := textproto.PromptFormat(format)
	if !ok {
		return controlapi.PromptResponse{Format: format}, fmt.Errorf("%w: format %q is not one of %s", errBadPromptFormat, format, strings.Join(textproto.PromptFormats, ", "))
	}
	out := controlapi.PromptResponse{Format: canonical}
	if canonical == textproto.PromptVCP {
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
	}
	var specs []toolhost.Spec
	for _, t := range n.Tools() {
		if t.Exposure.Exposed && !t.Spec.Implicit {
			specs = append(specs, t.Spec)
		}
	}
	var err error
	out.Tools = len(specs)
	out.Text, err = textproto.RenderSpecs(canonical, specs)
	return out, err
}

var errBadPromptFormat = errors.New("unknown prompt format")

package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vcpnode/vcpnode/toolhost/schema"
)

// convertSchema turns an MCP tool's inputSchema (as the SDK client decodes
// it: a map, or anything that marshals to a JSON object) into the
// schema.Schema the node checks and coerces against, with toolhost's
// converter (aliases for names VCP cannot carry included). The tool's
// description goes into the schema's top-level "description" when it has
// none, which the generated invocation text shows for the command.
func convertSchema(description string, input any) (*schema.Schema, error) {
	raw, err := json.Marshal(input)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", schema.ErrInvalid, err)
	}
	if input == nil || string(raw) == "null" {
		// Some servers omit the schema of an argument-less tool.
		raw = []byte(`{"type":"object"}`)
	}
	if d := strings.TrimSpace(description); d != "" {
		var top map[string]json.RawMessage
		if json.Unmarshal(raw, &top) == nil && top != nil {
			if _, has := top["description"]; !has {
				top["description"], _ = json.Marshal(d)
				if b, err := json.Marshal(top); err == nil {
					raw = b
				}
			}
		}
	}
	return schema.FromJSON(raw)
}

// clip shortens s for a message.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}

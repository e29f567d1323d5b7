package mcp

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vcpnode/vcpnode/toolhost"
)

// callResult is what a successful MCP call becomes: the content parts the
// VCP server hands to the model, and the structured result kept beside them
// for callers that read JSON.
type callResult struct {
	Content           []toolhost.ContentPart `json:"content"`
	StructuredContent any                    `json:"structuredContent,omitempty"`
}

// mapResult turns an MCP CallToolResult into a VCP result. Text stays text;
// images become image_url parts with a data: URL (the server shows those to
// the model); resources and links become text naming the URI, an embedded
// text resource inline. isError makes an error result with the server's
// own text.
func mapResult(server, tool string, res *sdk.CallToolResult) (any, error) {
	if res == nil {
		return nil, fmt.Errorf("MCP server %s answered %s with no result", server, tool)
	}
	parts := make([]toolhost.ContentPart, 0, len(res.Content))
	for _, c := range res.Content {
		parts = append(parts, mapContent(c))
	}
	if res.IsError {
		var texts []string
		for _, p := range parts {
			if p.Type == "text" && strings.TrimSpace(p.Text) != "" {
				texts = append(texts, p.Text)
			}
		}
		if len(texts) == 0 {
			return nil, fmt.Errorf("MCP tool %s of server %s failed without a message", tool, server)
		}
		return nil, errors.New(strings.Join(texts, "\n"))
	}
	if len(parts) == 0 && res.StructuredContent == nil {
		parts = append(parts, toolhost.ContentPart{Type: "text",
			Text: fmt.Sprintf("MCP tool %s finished with no output", tool)})
	}
	return callResult{Content: parts, StructuredContent: res.StructuredContent}, nil
}

func mapContent(c sdk.Content) toolhost.ContentPart {
	switch v := c.(type) {
	case *sdk.TextContent:
		return text(v.Text)
	case *sdk.ImageContent:
		return image(v.MIMEType, v.Data)
	case *sdk.AudioContent:
		return text(fmt.Sprintf("[audio (%s, %d bytes) not shown: VCP results carry text and images]", orUnknown(v.MIMEType), len(v.Data)))
	case *sdk.ResourceLink:
		return text(describeLink(v))
	case *sdk.EmbeddedResource:
		return embedded(v.Resource)
	case nil:
		return text("[empty content part]")
	default:
		return text(fmt.Sprintf("[content of type %T not shown]", c))
	}
}

func text(s string) toolhost.ContentPart { return toolhost.ContentPart{Type: "text", Text: s} }

func image(mime string, data []byte) toolhost.ContentPart {
	if mime == "" {
		mime = "application/octet-stream"
	}
	return toolhost.ContentPart{Type: "image_url", ImageURL: &toolhost.ImageURL{
		URL: "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data),
	}}
}

func describeLink(l *sdk.ResourceLink) string {
	var b strings.Builder
	b.WriteString("resource: ")
	b.WriteString(l.URI)
	var extra []string
	for _, s := range []string{l.Title, l.Name, l.MIMEType} {
		if s != "" {
			extra = append(extra, s)
		}
	}
	if len(extra) > 0 {
		b.WriteString(" (" + strings.Join(extra, ", ") + ")")
	}
	if l.Description != "" {
		b.WriteString(": " + l.Description)
	}
	return b.String()
}

func embedded(r *sdk.ResourceContents) toolhost.ContentPart {
	switch {
	case r == nil:
		return text("[embedded resource without contents]")
	case r.Blob != nil && strings.HasPrefix(r.MIMEType, "image/"):
		return image(r.MIMEType, r.Blob)
	case r.Blob != nil:
		return text(fmt.Sprintf("resource %s (%s, %d bytes of binary data not shown)", r.URI, orUnknown(r.MIMEType), len(r.Blob)))
	default:
		return text(fmt.Sprintf("resource %s:\n%s", r.URI, r.Text))
	}
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}

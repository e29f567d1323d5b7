package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/schema"
)

// maxListed bounds the resources, templates or prompts one answer lists;
// maxPages bounds the pages read to find them.
const (
	maxListed = 500
	maxPages  = 100
)

// request is one request to a server's session, its answer made readable.
type request func(ctx context.Context, cs *sdk.ClientSession) (any, error)

// extraRequest checks the arguments of one of the node's commands and
// returns the request it makes. Errors returned by the request are the
// session's (the server's answer, or a broken connection).
func extraRequest(server string, kind commandKind, args map[string]json.RawMessage) (request, error) {
	switch kind {
	case kindListResources:
		return func(ctx context.Context, cs *sdk.ClientSession) (any, error) { return listResources(ctx, cs, server) }, nil
	case kindReadResource:
		uri, err := stringArg(args, "uri")
		if err != nil || uri == "" {
			return nil, fmt.Errorf("%s needs uri: the resource to read (%s lists them)", cmdReadResource, cmdListResources)
		}
		return func(ctx context.Context, cs *sdk.ClientSession) (any, error) {
			res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
			if err != nil {
				return nil, err
			}
			return resourceContents(uri, res), nil
		}, nil
	case kindListPrompts:
		return func(ctx context.Context, cs *sdk.ClientSession) (any, error) { return listPrompts(ctx, cs, server) }, nil
	case kindGetPrompt:
		name, err := stringArg(args, "name")
		if err != nil || name == "" {
			return nil, fmt.Errorf("%s needs name: the prompt to get (%s lists them)", cmdGetPrompt, cmdListPrompts)
		}
		pargs, err := promptArgs(args)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, cs *sdk.ClientSession) (any, error) {
			res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: pargs})
			if err != nil {
				return nil, err
			}
			return promptMessages(name, res), nil
		}, nil
	}
	return nil, fmt.Errorf("command kind %d is not one of the node's", kind)
}

// stringArg reads a string argument; absent is "".
func stringArg(args map[string]json.RawMessage, name string) (string, error) {
	raw, ok := args[name]
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s must be a string, got %s", name, schema.JSONKind(raw))
	}
	return strings.TrimSpace(s), nil
}

// promptArgs reads a prompt's arguments: the "arguments" object, or a JSON
// string holding one (the dispatcher coerces VCP's strings, a direct call
// may not). MCP prompt arguments are strings; other values are passed as
// their JSON text.
func promptArgs(args map[string]json.RawMessage) (map[string]string, error) {
	out := map[string]string{}
	if raw, ok := args["arguments"]; ok && schema.JSONKind(raw) != "null" {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			var s string
			if json.Unmarshal(raw, &s) != nil || json.Unmarshal([]byte(s), &obj) != nil {
				return nil, fmt.Errorf("arguments must be an object of the prompt's arguments, like {\"topic\": \"…\"}; got %s", schema.JSONKind(raw))
			}
		}
		for k, v := range obj {
			out[k] = argText(v)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func argText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// methodMissing reports an answer saying the server has no such method.
func methodMissing(err error) bool {
	var answer *jsonrpc.Error
	return errors.As(err, &answer) && answer.Code == jsonrpc.CodeMethodNotFound
}

// collectPages reads a paged MCP list from the first page (empty cursor)
// until the server has no more, or maxListed entries or maxPages pages
// are read; more says the server had entries left.
func collectPages[T any](page func(cursor string) ([]T, string, error)) (all []T, more bool, err error) {
	cursor := ""
	for n := 0; ; n++ {
		items, next, err := page(cursor)
		if err != nil {
			return all, false, err
		}
		all = append(all, items...)
		if next == "" {
			return all, false, nil
		}
		if len(all) >= maxListed || n >= maxPages {
			return all, true, nil
		}
		cursor = next
	}
}

// listResources lists the server's resources and resource templates.
func listResources(ctx context.Context, cs *sdk.ClientSession, server string) (string, error) {
	resources, more, err := collectPages(func(cursor string) ([]*sdk.Resource, string, error) {
		res, err := cs.ListResources(ctx, &sdk.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Resources, res.NextCursor, nil
	})
	if err != nil {
		return "", err
	}
	templates, moreTemplates, err := collectPages(func(cursor string) ([]*sdk.ResourceTemplate, string, error) {
		res, err := cs.ListResourceTemplates(ctx, &sdk.ListResourceTemplatesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.ResourceTemplates, res.NextCursor, nil
	})
	switch {
	case methodMissing(err):
		// templates are optional
	case err != nil:
		return "", err
	}
	more = more || moreTemplates

	var b strings.Builder
	resources = slices.DeleteFunc(resources, func(r *sdk.Resource) bool { return r == nil })
	templates = slices.DeleteFunc(templates, func(t *sdk.ResourceTemplate) bool { return t == nil })
	switch {
	case len(resources) == 0 && len(templates) == 0:
		fmt.Fprintf(&b, "MCP server %s lists no resources.\n", server)
		return b.String(), nil
	case len(resources) == 0:
		fmt.Fprintf(&b, "MCP server %s lists no resources, only templates.\n", server)
	default:
		fmt.Fprintf(&b, "MCP server %s has %s (read one with %s and its uri):\n", server, count(len(resources), "resource", "resources"), cmdReadResource)
	}
	for _, r := range resources[:min(len(resources), maxListed)] {
		var about []string
		if r.Title != "" {
			about = append(about, r.Title)
		}
		if r.Name != "" && r.Name != r.Title {
			about = append(about, r.Name)
		}
		if r.MIMEType != "" {
			about = append(about, r.MIMEType)
		}
		if r.Size > 0 {
			about = append(about, count(int(r.Size), "byte", "bytes"))
		}
		line(&b, r.URI, about, r.Description)
	}
	if len(templates) > 0 {
		fmt.Fprintf(&b, "%s (fill in the {…} parts to make a uri):\n", count(len(templates), "resource template", "resource templates"))
	}
	for _, t := range templates[:min(len(templates), maxListed)] {
		var about []string
		for _, s := range []string{t.Title, t.Name, t.MIMEType} {
			if s != "" && !slices.Contains(about, s) {
				about = append(about, s)
			}
		}
		line(&b, t.URITemplate, about, t.Description)
	}
	if more {
		fmt.Fprintf(&b, "[truncated: the server has more; this list stops at %d entries]\n", maxListed)
	}
	return b.String(), nil
}

// line writes "- what (about, …): description".
func line(b *strings.Builder, what string, about []string, description string) {
	b.WriteString("- " + what)
	if len(about) > 0 {
		b.WriteString(" (" + strings.Join(about, ", ") + ")")
	}
	if d := strings.TrimSpace(description); d != "" {
		b.WriteString(": " + oneLine(d))
	}
	b.WriteByte('\n')
}

// resourceContents turns a resources/read answer into content parts as a
// tool's embedded resources are: text as it is, images shown, other binary
// data described by its type and size.
func resourceContents(uri string, res *sdk.ReadResourceResult) callResult {
	var parts []toolhost.ContentPart
	for _, c := range res.Contents {
		parts = append(parts, embedded(c))
	}
	if len(parts) == 0 {
		parts = append(parts, text(fmt.Sprintf("resource %s has no contents", uri)))
	}
	return callResult{Content: parts}
}

// listPrompts lists the server's prompts with their arguments.
func listPrompts(ctx context.Context, cs *sdk.ClientSession, server string) (string, error) {
	prompts, more, err := collectPages(func(cursor string) ([]*sdk.Prompt, string, error) {
		res, err := cs.ListPrompts(ctx, &sdk.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Prompts, res.NextCursor, nil
	})
	if err != nil {
		return "", err
	}
	prompts = slices.DeleteFunc(prompts, func(p *sdk.Prompt) bool { return p == nil })
	var b strings.Builder
	if len(prompts) == 0 {
		fmt.Fprintf(&b, "MCP server %s lists no prompts.\n", server)
		return b.String(), nil
	}
	fmt.Fprintf(&b, "MCP server %s has %s (get one with %s, its name and its arguments):\n", server, count(len(prompts), "prompt", "prompts"), cmdGetPrompt)
	for _, p := range prompts[:min(len(prompts), maxListed)] {
		var about []string
		if p.Title != "" && p.Title != p.Name {
			about = append(about, p.Title)
		}
		line(&b, p.Name, about, p.Description)
		if len(p.Arguments) == 0 {
			b.WriteString("  no arguments\n")
			continue
		}
		b.WriteString("  arguments:\n")
		for _, a := range p.Arguments {
			if a == nil {
				continue
			}
			req := "optional"
			if a.Required {
				req = "required"
			}
			fmt.Fprintf(&b, "  - %s (%s)", a.Name, req)
			if d := strings.TrimSpace(firstOf(a.Description, a.Title)); d != "" {
				b.WriteString(": " + oneLine(d))
			}
			b.WriteByte('\n')
		}
	}
	if more {
		fmt.Fprintf(&b, "[truncated: the server has more; this list stops at %d prompts]\n", maxListed)
	}
	return b.String(), nil
}

// promptMessages turns a prompts/get answer into content parts: its
// description, then each message headed by its role.
func promptMessages(name string, res *sdk.GetPromptResult) callResult {
	head := fmt.Sprintf("prompt %s, %s", name, count(len(res.Messages), "message", "messages"))
	if d := strings.TrimSpace(res.Description); d != "" {
		head += ": " + oneLine(d)
	}
	parts := []toolhost.ContentPart{text(head)}
	for _, m := range res.Messages {
		if m == nil {
			continue
		}
		p := mapContent(m.Content)
		if p.Type == "text" {
			p.Text = fmt.Sprintf("[%s]\n%s", m.Role, p.Text)
			parts = append(parts, p)
			continue
		}
		parts = append(parts, text(fmt.Sprintf("[%s]", m.Role)), p)
	}
	return callResult{Content: parts}
}

// count writes "1 prompt" or "3 prompts".
func count(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// oneLine joins the lines of s with spaces, for a list entry.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

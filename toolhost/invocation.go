package toolhost

import (
	"fmt"
	"strings"

	"github.com/vcpnode/vcpnode/toolhost/schema"
)

// The markers of the VCP text protocol (docs/vcp-parsing.md §2, §3).
const (
	RequestStart = "<<<[TOOL_REQUEST]>>>"
	RequestEnd   = "<<<[END_TOOL_REQUEST]>>>"
	ValueStart   = "「始」"
	ValueEnd     = "「末」"
)

// withInvocationText returns c with its description and example generated
// from its Schema when c is typed and its Description is empty, so every
// source of typed tools teaches the model the same call form. A typed
// command with its own Description keeps it and only gets an Example when it
// has none.
func withInvocationText(s Spec, c Command) Command {
	if c.Schema == nil {
		return c
	}
	if c.Description == "" {
		c.Description = describeCommand(s, c)
	}
	if c.Example == "" {
		c.Example = exampleCall(s, c)
	}
	return c
}

// Usage is the invocation text of s's command named command, or of every
// command when command is "" and s has several: each description followed by
// its example, as an error result ends with them.
func Usage(s Spec, command string) string {
	var parts []string
	for _, c := range s.Commands {
		if len(s.Commands) > 1 && command != "" && c.Command != command {
			continue
		}
		c = withInvocationText(s, c)
		text := strings.TrimSpace(c.Description)
		if c.Example != "" {
			text += "\n" + c.Example
		}
		parts = append(parts, text)
	}
	return strings.Join(parts, "\n\n")
}

// describeCommand writes what a model needs to call c: the tool's
// description, then one line per parameter with its type, whether it is
// required, its default and its allowed values.
func describeCommand(s Spec, c Command) string {
	var b strings.Builder
	own := c.Schema.Description()
	if d := strings.TrimSpace(s.Description); d != "" {
		b.WriteString(d)
		b.WriteByte('\n')
	} else if len(s.Commands) == 1 && own != "" {
		b.WriteString(own)
		b.WriteByte('\n')
	}
	if len(s.Commands) > 1 && c.Command != "" {
		pass := "pass"
		if own != "" {
			own = strings.TrimRight(own, ".") + "."
			pass = own + " Pass"
		}
		fmt.Fprintf(&b, "Command %s: %s %s:%s%s%s.\n", c.Command, pass, schema.CommandArg, ValueStart, c.Command, ValueEnd)
	}
	params := c.Schema.Params
	if len(params) == 0 {
		b.WriteString("Takes no parameters.")
		return b.String()
	}
	b.WriteString("Parameters:")
	for _, p := range params {
		b.WriteString("\n- ")
		b.WriteString(p.Doc())
	}
	return b.String()
}

// exampleCall writes a TOOL_REQUEST block calling c with its required
// parameters (or, when none is required, the first one), each with its
// default, its first allowed value, or a placeholder of its type.
func exampleCall(s Spec, c Command) string {
	var fields [][2]string
	fields = append(fields, [2]string{"tool_name", s.Name})
	if len(s.Commands) > 1 && c.Command != "" {
		fields = append(fields, [2]string{schema.CommandArg, c.Command})
	}
	shown := 0
	for _, p := range c.Schema.Params {
		if p.Required {
			fields = append(fields, [2]string{p.WireName(), p.Example()})
			shown++
		}
	}
	if shown == 0 && len(c.Schema.Params) > 0 {
		p := c.Schema.Params[0]
		fields = append(fields, [2]string{p.WireName(), p.Example()})
	}
	var b strings.Builder
	b.WriteString(RequestStart)
	for i, f := range fields {
		b.WriteByte('\n')
		b.WriteString(f[0])
		b.WriteByte(':')
		b.WriteString(ValueStart)
		b.WriteString(f[1])
		b.WriteString(ValueEnd)
		if i < len(fields)-1 {
			b.WriteByte(',')
		}
	}
	b.WriteByte('\n')
	b.WriteString(RequestEnd)
	return b.String()
}

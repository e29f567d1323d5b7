package testtool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/schema"
)

// Thumb is a typed tool, "Thumb", that answers with the arguments Invoke
// received: what a caller's stringly-typed arguments became.
type Thumb struct{}

// Spec describes Thumb with a schema of every parameter type.
func (Thumb) Spec() toolhost.Spec {
	return toolhost.Spec{
		Name:        "Thumb",
		Description: "Makes a thumbnail.",
		Commands: []toolhost.Command{{Schema: &schema.Schema{Params: []schema.Param{
			{Name: "path", Type: schema.TypeString, Required: true, Description: "the image"},
			{Name: "size", Type: schema.TypeInteger, Required: true},
			{Name: "crop", Type: schema.TypeBoolean, Default: json.RawMessage(`false`)},
			{Name: "format", Type: schema.TypeString, Enum: []json.RawMessage{[]byte(`"png"`), []byte(`"jpeg"`)}},
		}}}},
		Source:             "test",
		DistributedExposed: true,
	}
}

// Invoke answers {"args": the call's arguments}.
func (Thumb) Invoke(_ context.Context, c toolhost.Call) (any, error) {
	return map[string]any{"args": c.Args}, nil
}

// Files is a tool, "Files", with two named commands and no schema, as a
// multi-command plugin or an MCP server is.
type Files struct{}

// Spec describes Files' commands, read and delete.
func (Files) Spec() toolhost.Spec {
	return toolhost.Spec{Name: "Files", Description: "reads and deletes", DistributedExposed: true,
		Commands: []toolhost.Command{{Command: "read"}, {Command: "delete"}}}
}

// Invoke answers "did <command>".
func (Files) Invoke(_ context.Context, c toolhost.Call) (any, error) {
	var cmd string
	_ = json.Unmarshal(c.Args[schema.CommandArg], &cmd)
	return "did " + cmd, nil
}

// Calc is a plugin command in the style of many VCP plugins, "Calc": an
// identifier and a description that shows the call form, no example, no
// schema.
type Calc struct{}

// Spec describes Calc's one command by its call form.
func (Calc) Spec() toolhost.Spec {
	return toolhost.Spec{Name: "Calc", Description: "Computes an expression.", DistributedExposed: true,
		Commands: []toolhost.Command{{Command: "CalcRequest", Description: "Call it so:\n<<<[TOOL_REQUEST]>>>\n" +
			"tool_name:「始」Calc「末」,\nexpression:「始」1+1「末」\n<<<[END_TOOL_REQUEST]>>>"}}}
}

// Invoke answers "computed <expression>", or an error without one.
func (Calc) Invoke(_ context.Context, c toolhost.Call) (any, error) {
	var e string
	if err := json.Unmarshal(c.Args["expression"], &e); err != nil || e == "" {
		return nil, fmt.Errorf("no expression in %s", c.Args)
	}
	return "computed " + e, nil
}

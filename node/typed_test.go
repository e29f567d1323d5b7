package node

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/internal/testtool"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// TestTypedToolThroughHub: the server's stringly-typed args arrive coerced
// at Invoke, and a wrong call is answered with an error naming every problem
// and ending with the generated invocation text, which is also what
// register_tools carried.
func TestTypedToolThroughHub(t *testing.T) {
	h := startHarness(t, harnessOpt{tools: []toolhost.Tool{testtool.Thumb{}}, config: func(c *config.Config) {
		c.Node.ExposedTools = []string{"Thumb"}
	}})
	conn := h.accept()

	reg, err := conn.WaitType(h.ctx, wsproto.TypeRegisterTools)
	if err != nil {
		t.Fatal(err)
	}
	rt := reg.(wsproto.RegisterTools)
	var m toolhost.Manifest
	if len(rt.Tools) != 1 || json.Unmarshal(rt.Tools[0], &m) != nil {
		t.Fatalf("register_tools tools: %s", rt.Tools)
	}
	wantDesc := "Makes a thumbnail.\nParameters:\n" +
		"- path (string, required): the image\n" +
		"- size (integer, required)\n" +
		"- crop (boolean, optional, default false)\n" +
		"- format (string, optional, one of \"png\", \"jpeg\")"
	wantExample := "<<<[TOOL_REQUEST]>>>\ntool_name:「始」Thumb「末」,\npath:「始」<path>「末」,\nsize:「始」1「末」\n<<<[END_TOOL_REQUEST]>>>"
	cmd := m.Capabilities.InvocationCommands[0]
	if cmd.Description != wantDesc || cmd.Example != wantExample {
		t.Fatalf("registered command:\n%s\n%s", cmd.Description, cmd.Example)
	}

	res := h.call(conn, "Thumb", map[string]any{"path": "cat.png", "size": "128", "format": "png", "maid": "Nova"})
	if res.Status != "success" {
		t.Fatalf("coerced call failed: %+v", res)
	}
	if got, want := string(res.Result), `{"args":{"crop":false,"format":"png","maid":"Nova","path":"cat.png","size":128}}`; got != want {
		t.Fatalf("result %s\nwant %s", got, want)
	}

	res = h.call(conn, "Thumb", map[string]any{"size": "big", "format": "gif", "sise": "1", "river_context": []any{map[string]any{"role": "user"}}})
	want := "invalid arguments for Thumb:\n" +
		"- missing required argument \"path\" (string)\n" +
		"- argument \"size\": \"big\" is not an integer\n" +
		"- argument \"format\": \"gif\" is not one of \"png\", \"jpeg\"\n" +
		"- unknown argument \"sise\": the parameters are path, size, crop, format\n" +
		"Call it like this:\n" + wantDesc + "\n" + wantExample
	if res.Status != "error" || res.Error != want {
		t.Fatalf("wrong call answered %+v\nwant error:\n%s", res, want)
	}
	if !strings.Contains(h.logs.String(), `"outcome":"bad_args"`) {
		t.Errorf("the call-finished line does not say bad_args:\n%s", h.logs.String())
	}
}

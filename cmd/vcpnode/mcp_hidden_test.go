package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vcpnode/vcpnode/toolhost"
)

// diskTool has two commands, as a multi-command plugin has.
type diskTool struct{}

func (diskTool) Spec() toolhost.Spec {
	return toolhost.Spec{Name: "Disk", Description: "reads and deletes", DistributedExposed: true, Source: "test",
		Commands: []toolhost.Command{
			{Command: "Read", Description: "reads a block"},
			{Command: "Delete", Description: "deletes a block"},
		}}
}

func (diskTool) Invoke(_ context.Context, c toolhost.Call) (any, error) {
	return "ran " + string(c.Args["command"]), nil
}

// [tools.X.commands.Y] expose = false reaches an MCP client of the real
// `vcpnode mcp` command: the hidden command is in neither the tool's
// description nor its schema, and calling it is answered like an unknown
// command while the other command runs.
func TestMCPCommandHidesAHiddenCommand(t *testing.T) {
	d := startDaemon(t, "[tools.Disk]\nexpose = true\n[tools.Disk.commands.Delete]\nexpose = false\n", diskTool{})
	cs := mcpSession(t, d)
	list, err := cs.ListTools(d.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var disk *sdk.Tool
	for _, tl := range list.Tools {
		if tl.Name == "Disk" {
			disk = tl
		}
	}
	if disk == nil {
		t.Fatalf("Disk is not listed: %+v", list.Tools)
	}
	whole, _ := json.Marshal(disk)
	if !strings.Contains(string(whole), "reads a block") || strings.Contains(string(whole), "Delete") ||
		strings.Contains(string(whole), "deletes a block") {
		t.Errorf("the listed tool shows the hidden command or lacks the other: %s", whole)
	}
	res, err := cs.CallTool(d.ctx, &sdk.CallToolParams{Name: "Disk", Arguments: map[string]any{"command": "Read"}})
	if err != nil || res.IsError || !strings.Contains(callText(t, res), "ran \"Read\"") {
		t.Errorf("the offered command: %+v %v (%q)", res, err, callTextOf(res))
	}
	res, err = cs.CallTool(d.ctx, &sdk.CallToolParams{Name: "Disk", Arguments: map[string]any{"command": "Delete"}})
	if err == nil && (res == nil || !res.IsError) {
		t.Fatalf("the hidden command ran for an MCP client: %+v", res)
	}
	if err == nil && !strings.Contains(callText(t, res), `unknown command "Delete"`) {
		t.Errorf("the hidden command's answer = %q; want it answered like an unknown command", callText(t, res))
	}
}

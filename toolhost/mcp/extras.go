package mcp

import (
	"encoding/json"
	"fmt"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/schema"
)

// The commands the node adds to a server's tool for what the server
// offers besides tools: its resources and its prompts, when its
// capabilities say it has them.
const (
	cmdListResources = "list_resources"
	cmdReadResource  = "read_resource"
	cmdListPrompts   = "list_prompts"
	cmdGetPrompt     = "get_prompt"
)

// commandKind says what a command of the tool runs.
type commandKind int

const (
	kindTool          commandKind = iota // an MCP tool of the server
	kindListResources                    // resources/list and resources/templates/list
	kindReadResource                     // resources/read
	kindListPrompts                      // prompts/list
	kindGetPrompt                        // prompts/get
)

// extra is one command the node adds, with its schema.
type extra struct {
	name   string
	kind   commandKind
	schema func(server string) string // the JSON Schema, for the server's title
}

var resourceCommands = []extra{
	{cmdListResources, kindListResources, func(server string) string {
		return obj(fmt.Sprintf("Lists the resources of the MCP server %s (URI, name, type, size) and its resource templates; read one with %s.", server, cmdReadResource), ``)
	}},
	{cmdReadResource, kindReadResource, func(server string) string {
		return obj(fmt.Sprintf("Reads one resource of the MCP server %s: text as it is, binary data described by its type and size.", server),
			`"uri":{"type":"string","description":"The resource's URI, as `+cmdListResources+` gives it, or one made from a resource template."}`, "uri")
	}},
}

var promptCommands = []extra{
	{cmdListPrompts, kindListPrompts, func(server string) string {
		return obj(fmt.Sprintf("Lists the prompts of the MCP server %s with their arguments; get one with %s.", server, cmdGetPrompt), ``)
	}},
	{cmdGetPrompt, kindGetPrompt, func(server string) string {
		return obj(fmt.Sprintf("Gets one prompt of the MCP server %s, filled in with its arguments: the messages it makes.", server),
			`"name":{"type":"string","description":"The prompt's name, as `+cmdListPrompts+` gives it."},`+
				`"arguments":{"type":"object","additionalProperties":{"type":"string"},"description":"The prompt's arguments by name, each a string, as list_prompts gives them: {\"topic\": \"…\"}."}`, "name")
	}},
}

// obj is the JSON Schema of an object with the given properties.
func obj(description, props string, required ...string) string {
	desc, _ := json.Marshal(description)
	req, _ := json.Marshal(append([]string{}, required...))
	return `{"type":"object","description":` + string(desc) + `,"properties":{` + props + `},"required":` + string(req) + `}`
}

// addExtras adds the resource and prompt commands the server's
// capabilities call for. include and exclude name them as they name tools;
// a tool of the server with the same name keeps it, with a warning.
func addExtras(set *toolSet, cfg ServerConfig, init *sdk.InitializeResult, title string, included func(string) bool) {
	if init == nil || init.Capabilities == nil {
		return
	}
	var extras []extra
	if init.Capabilities.Resources != nil {
		extras = append(extras, resourceCommands...)
	}
	if init.Capabilities.Prompts != nil {
		extras = append(extras, promptCommands...)
	}
	for _, e := range extras {
		if !included(e.name) {
			continue
		}
		if _, clash := set.commands[e.name]; clash {
			set.warnings = append(set.warnings, fmt.Sprintf("MCP server %s has a tool named %s, which is offered instead of the node's command of that name", cfg.Name, e.name))
			continue
		}
		sc, err := schema.FromJSON(json.RawMessage(e.schema(title)))
		if err != nil {
			// The schemas are the node's own; a failure is a bug here.
			panic(fmt.Sprintf("mcp: schema of %s: %v", e.name, err))
		}
		c := &command{name: e.name, kind: e.kind, schema: sc, params: map[string]string{}}
		for _, p := range sc.Params {
			c.params[p.WireName()] = p.Name
		}
		set.commands[e.name] = c
		set.names = append(set.names, e.name)
		set.spec.Commands = append(set.spec.Commands, toolhost.Command{Command: e.name, Schema: sc})
	}
}

// isExtra reports whether name is one of the node's own commands, which an
// include list may name without the server having a tool of that name.
func isExtra(name string) bool {
	return slices.ContainsFunc(append(slices.Clone(resourceCommands), promptCommands...), func(e extra) bool { return e.name == name })
}

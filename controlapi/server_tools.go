package controlapi

import (
	"context"
	"net/http"
)

// PathServerTools lists the VCP server's own tools as this node reaches
// them through the server's VCPToolBridge; ?refresh=1 asks the server
// again first. They are called through PathCall as "vcp_<Name>".
const PathServerTools = "/v1/server/tools"

// ServerToolsResponse is GET /v1/server/tools.
type ServerToolsResponse struct {
	// State is "offered", "none" (no bridge on the server), "asking" or
	// "disconnected"; Message says it in plain words.
	State   string       `json:"state"`
	Message string       `json:"message"`
	Tools   []ServerTool `json:"tools"`
	// Error is why a refresh asked for failed (the list is the last known).
	Error string `json:"error,omitempty"`
}

// ServerTool is one of the server's tools.
type ServerTool struct {
	// Name is the server's name; Local is the name this node calls it by.
	Name        string          `json:"name"`
	Local       string          `json:"local"`
	DisplayName string          `json:"displayName,omitempty"`
	Description string          `json:"description,omitempty"`
	Version     string          `json:"version,omitempty"`
	Commands    []CommandStatus `json:"commands,omitempty"`
	// Offered says whether [bridge] offer gives it to MCP clients.
	Offered bool `json:"offered"`
}

// ServerTools lists the server's tools (GET /v1/server/tools).
func (c *ControlClient) ServerTools(ctx context.Context, refresh bool) (ServerToolsResponse, error) {
	var out ServerToolsResponse
	path := PathServerTools
	if refresh {
		path += "?refresh=1"
	}
	return out, c.Do(ctx, http.MethodGet, path, nil, &out)
}

// ServerToolsStatus is the server tools' part of GET /v1/status.
type ServerToolsStatus struct {
	State   string `json:"state"`
	Tools   int    `json:"tools"`
	Offered int    `json:"offered"` // to MCP clients, by [bridge] offer
	Message string `json:"message"`
	// Warnings name the server tools left out because a tool of this
	// machine has their name.
	Warnings []string `json:"warnings,omitempty"`
}

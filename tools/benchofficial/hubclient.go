package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// hubClient talks to hub.js's loopback API.
type hubClient struct {
	*proc
	hubPort int    // where the nodes connect
	api     string // base URL of the measuring API
	toolbox bool   // the server is VCPToolBox's WebSocketServer.js
}

type serverEntry struct {
	ServerID   string   `json:"serverId"`
	ServerName string   `json:"serverName"`
	Tools      []string `json:"tools"`
}

// runRequest asks the server to make count calls, inflight at a time.
type runRequest struct {
	Server          string         `json:"server"`
	Tool            string         `json:"tool"`
	Args            map[string]any `json:"args"`
	Count           int            `json:"count"`
	Inflight        int            `json:"inflight"`
	GapMs           int            `json:"gapMs,omitempty"`
	ExpectFileBytes int            `json:"expectFileBytes,omitempty"`
	ExpectText      string         `json:"expectText,omitempty"`
}

type runResult struct {
	LatMs      []float64 `json:"latMs"`
	WallMs     float64   `json:"wallMs"`
	Errors     int       `json:"errors"`
	FirstError string    `json:"firstError"`
}

func (h *hubClient) servers(ctx context.Context) ([]serverEntry, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.api+"/servers", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out []serverEntry
	return out, json.NewDecoder(resp.Body).Decode(&out)
}

// waitRegistered polls the server until the node has registered every tool
// in tools: the measurement never times a node the server cannot call yet.
func (h *hubClient) waitRegistered(ctx context.Context, n *nodeProc, tools []string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last []serverEntry
	for time.Now().Before(deadline) {
		list, err := h.servers(ctx)
		if err != nil {
			return err
		}
		last = list
		for _, s := range list {
			if s.ServerName == n.server && containsAll(s.Tools, tools) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-n.exited:
			return fmt.Errorf("%s exited before registering", n.name)
		case <-tick.C:
		}
	}
	return fmt.Errorf("%s did not register %v within %s; the server sees %+v", n.server, tools, timeout, last)
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

func (h *hubClient) run(ctx context.Context, r runRequest) (runResult, error) {
	body, err := json.Marshal(r)
	if err != nil {
		return runResult{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.api+"/run", bytes.NewReader(body))
	if err != nil {
		return runResult{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return runResult{}, err
	}
	defer resp.Body.Close()
	var out runResult
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return out, fmt.Errorf("the server's answer to /run: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return out, fmt.Errorf("the server's /run failed: %s", resp.Status)
	}
	if out.Errors == r.Count {
		return out, fmt.Errorf("all %d calls of %s on %s failed, the first: %s", r.Count, r.Tool, r.Server, out.FirstError)
	}
	return out, nil
}

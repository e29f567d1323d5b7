//go:build linux

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The soak's own program doubles as its plugins: the daemon runs it with one
// of these first arguments (the manifests and the MCP server table say so).
const (
	modeSync   = "plugin-sync"
	modeAsync  = "plugin-async"
	modeStatic = "plugin-static"
	modeMCP    = "mcp-server"
)

// helperMode runs the program as a plugin or MCP server when its first
// argument names one, and reports whether it did.
func helperMode() bool {
	if len(os.Args) < 2 {
		return false
	}
	switch os.Args[1] {
	case modeSync, modeAsync, modeStatic, modeMCP:
		// A plugin is the OOM killer's first choice in the daemon's cgroup
		// (memoryPressure); raising one's own score needs no privilege. The
		// sandbox may refuse the write: then the daemon's score is kept.
		_ = os.WriteFile("/proc/self/oom_score_adj", []byte(victimScore), 0)
	default:
		return false
	}
	var err error
	switch os.Args[1] {
	case modeSync:
		err = runSyncPlugin()
	case modeAsync:
		if len(os.Args) < 3 {
			err = fmt.Errorf("%s needs the shared directory", modeAsync)
		} else {
			err = runAsyncPlugin(os.Args[2])
		}
	case modeStatic:
		fmt.Printf("soak static value %d", time.Now().UnixNano())
	case modeMCP:
		err = runMCPServer()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak helper:", err)
		os.Exit(1)
	}
	return true
}

// digest is what the echo tools answer for a payload, so the soak can tell
// a right answer from an answer to another call.
func digest(n, payload string) string {
	sum := sha256.Sum256([]byte(payload))
	return fmt.Sprintf("echo %s %d %s", n, len(payload), hex.EncodeToString(sum[:8]))
}

type pluginArgs struct {
	Command string `json:"command"`
	N       string `json:"n"`
	Payload string `json:"payload"`
}

func readArgs() (pluginArgs, error) {
	var a pluginArgs
	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		return a, fmt.Errorf("read arguments: %w", err)
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return a, fmt.Errorf("decode arguments: %w", err)
	}
	return a, nil
}

func textAnswer(text string) []byte {
	b, _ := json.Marshal(map[string]any{"status": "success", "result": map[string]any{
		"content": []map[string]string{{"type": "text", "text": text}},
	}})
	return b
}

// runSyncPlugin echoes a digest of its payload, or hangs until killed.
func runSyncPlugin() error {
	a, err := readArgs()
	if err != nil {
		return err
	}
	if a.Command == "hang" {
		time.Sleep(time.Hour) // the node's deadline or cancel kills it
	}
	_, err = os.Stdout.Write(textAnswer(digest(a.N, a.Payload)))
	return err
}

// callbackBody is what the asynchronous plugin posts; Seq is the order in
// which the node accepted callbacks.
type callbackBody struct {
	PluginName string `json:"pluginName"`
	TaskID     string `json:"taskId"`
	Status     string `json:"status"`
	Message    string `json:"message"`
	Seq        int    `json:"soakSeq"`
}

// runAsyncPlugin answers at once, then posts one callback. Posts of all
// instances are serialised by a lock in dir, and each attempt takes the
// next number from dir/seq: so the numbers the node accepted (appended to
// dir/accepted) are in the order it accepted them, and the hub must see
// them in increasing order.
func runAsyncPlugin(dir string) error {
	a, err := readArgs()
	if err != nil {
		return err
	}
	task := "t" + a.N
	if _, err := os.Stdout.Write(textAnswer("accepted " + task)); err != nil {
		return err
	}
	os.Stdout.Close() // the host has its answer; the rest is background work
	base, name := os.Getenv("CALLBACK_BASE_URL"), os.Getenv("PLUGIN_NAME_FOR_CALLBACK")
	if base == "" || name == "" {
		return fmt.Errorf("CALLBACK_BASE_URL or PLUGIN_NAME_FOR_CALLBACK is not set")
	}
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{Proxy: nil}}
	for attempt := range 3 {
		if attempt > 0 {
			time.Sleep(300 * time.Millisecond)
		}
		ok, err := postInOrder(client, dir, base+"/"+name+"/"+task, name, task)
		if ok {
			return nil
		}
		fmt.Fprintln(os.Stderr, "callback not accepted:", err)
	}
	return nil
}

func postInOrder(client *http.Client, dir, url, name, task string) (bool, error) {
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return false, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return false, err
	}
	seqFile := filepath.Join(dir, "seq")
	raw, _ := os.ReadFile(seqFile)
	seq, _ := strconv.Atoi(string(bytes.TrimSpace(raw)))
	seq++
	// Taken before the post: a process killed after a post the node accepted
	// must not let the next one reuse its number.
	if err := os.WriteFile(seqFile, []byte(strconv.Itoa(seq)), 0o600); err != nil {
		return false, err
	}
	body, _ := json.Marshal(callbackBody{PluginName: name, TaskID: task, Status: "Succeed", Message: "done " + task, Seq: seq})
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return false, fmt.Errorf("status %d", resp.StatusCode)
	}
	f, err := os.OpenFile(filepath.Join(dir, "accepted"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return true, err
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "%d %s\n", seq, task)
	return true, err
}

type mcpEchoArgs struct {
	N string `json:"n"`
}

// runMCPServer serves one tool, echo, on stdio.
func runMCPServer() error {
	srv := sdk.NewServer(&sdk.Implementation{Name: "soak", Version: "1.0.0"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "Echoes n."},
		func(_ context.Context, _ *sdk.CallToolRequest, in mcpEchoArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "mcp " + in.N}}}, nil, nil
		})
	return srv.Run(context.Background(), &sdk.StdioTransport{})
}

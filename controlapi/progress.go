package controlapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/vcpnode/vcpnode/config"
)

// A call made with CallRequest.Progress is answered with JSON lines
// (application/x-ndjson): a line per progress event, then one line with
// the response or the error. An error found before any progress is a plain
// error answer, as without Progress.

// CallProgress is one progress event of a call: an asynchronous server
// tool's task accepted, or its log and info events.
type CallProgress struct {
	// TaskID is the server's task.
	TaskID string `json:"taskId,omitempty"`
	// Kind is "accepted" (the server started the task), the server's
	// bridgeType ("log" or "info"), or ProgressDropped.
	Kind string `json:"kind"`
	// Message says the event in a few words.
	Message string `json:"message,omitempty"`
	// Data is the server's event as it sent it.
	Data json.RawMessage `json:"data,omitempty"`
	// Dropped, of a ProgressDropped line, counts the events lost since
	// the previous such line.
	Dropped int `json:"dropped,omitempty"`
}

// ProgressDropped is the kind of the line that says how many progress
// events were lost because the caller read slower than they came.
const ProgressDropped = "dropped"

// CallStreamLine is one line of a call answered with its progress:
// exactly one of its fields is set.
type CallStreamLine struct {
	Progress *CallProgress `json:"progress,omitempty"`
	Response *CallResponse `json:"response,omitempty"`
	Error    string        `json:"error,omitempty"`
}

type progressKey struct{}

// WithProgress makes the backend's Call report the call's progress to f.
func WithProgress(ctx context.Context, f func(CallProgress)) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

// ProgressOf is the function WithProgress set, or nil.
func ProgressOf(ctx context.Context) func(CallProgress) {
	f, _ := ctx.Value(progressKey{}).(func(CallProgress))
	return f
}

// CallWithProgress runs a call as Call does, calling progress for each
// progress event before it returns the response.
func (c *ControlClient) CallWithProgress(ctx context.Context, req CallRequest, progress func(CallProgress)) (CallResponse, error) {
	req.Progress = true
	body, err := json.Marshal(req)
	if err != nil {
		return CallResponse{}, fmt.Errorf("encode request: %w", err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://vcpnode"+PathCall, bytes.NewReader(body))
	if err != nil {
		return CallResponse{}, err
	}
	hr.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(hr)
	if err != nil {
		return CallResponse{}, c.dialError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return CallResponse{}, apiError(resp)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-ndjson") {
		// A daemon that does not stream answers with the response alone.
		var out CallResponse
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			return CallResponse{}, fmt.Errorf("read the answer of vcpnode at %s: %w", c.socket, err)
		}
		return out, nil
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*config.KiB), 64*config.MiB)
	for sc.Scan() {
		var line CallStreamLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return CallResponse{}, fmt.Errorf("read the answer of vcpnode at %s: %w", c.socket, err)
		}
		switch {
		case line.Response != nil:
			return *line.Response, nil
		case line.Error != "":
			return CallResponse{}, errors.New(line.Error)
		case line.Progress != nil && progress != nil:
			progress(*line.Progress)
		}
	}
	err = sc.Err()
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	if ctx.Err() != nil {
		return CallResponse{}, context.Cause(ctx)
	}
	return CallResponse{}, fmt.Errorf("vcpnode at %s ended the call's answer early: %w", c.socket, err)
}

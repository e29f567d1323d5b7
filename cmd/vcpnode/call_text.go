package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost/textproto"
)

// TextCallResult is one call of `vcpnode call --text --json`: the call as
// parsed and the daemon's answer.
type TextCallResult struct {
	Call     textproto.Call          `json:"call"`
	Response controlapi.CallResponse `json:"response"`
}

// runTextCalls parses a model's reply and runs each call it holds through
// the daemon, as `vcpnode call` runs one, in the order of the reply.
func (a *app) runTextCalls(cmd *cobra.Command, f *controlFlags, name string, fuzzy bool) error {
	reply, err := a.readReply(cmd, name)
	if err != nil {
		return err
	}
	res := textproto.Parse(reply, textproto.Options{Fuzzy: fuzzy})
	printRejected(a.stderr, res.Rejected)
	if len(res.Calls) == 0 {
		return noCallsError(res)
	}
	c, ctx, done, err := a.controlClient(cmd, f, 0)
	if err != nil {
		return err
	}
	defer done()
	var results []TextCallResult
	failed := 0
	for i, call := range res.Calls {
		resp, err := c.Call(ctx, controlapi.CallRequest{Tool: call.Tool, Args: call.Args})
		if err != nil {
			return fmt.Errorf("call %d of %d (%s, line %d): %w", i+1, len(res.Calls), call.Tool, call.Line, err)
		}
		results = append(results, TextCallResult{Call: call, Response: resp})
		if !resp.OK {
			failed++
		}
		if f.json {
			continue
		}
		took := ctlAge(time.Duration(resp.DurationMs) * time.Millisecond)
		if !resp.OK {
			fmt.Fprintf(a.stdout, "call %d of %d, line %d: %s failed (%s, request %s, after %s):\n%s\n",
				i+1, len(res.Calls), call.Line, resp.Tool, resp.Outcome, resp.RequestID, took, resp.Error)
			continue
		}
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, resp.Result, "", "  "); err != nil {
			pretty.Reset()
			pretty.Write(resp.Result)
		}
		fmt.Fprintf(a.stdout, "call %d of %d, line %d: %s ok after %s (request %s):\n%s\n",
			i+1, len(res.Calls), call.Line, resp.Tool, took, resp.RequestID, pretty.Bytes())
	}
	if f.json {
		if err := writeJSON(a.stdout, results); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("%w: %d of %d calls failed", errToolFailed, failed, len(res.Calls))
	}
	return nil
}

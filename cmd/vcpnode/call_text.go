package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/textproto"
)

// TextCallResult is one call of `vcpnode call --text --json`: the call as
// parsed and the daemon's answer.
type TextCallResult struct {
	Call     textproto.Call          `json:"call"`
	Response controlapi.CallResponse `json:"response"`
}

// textCallOptions are call --text's flags.
type textCallOptions struct {
	fuzzy, parallel bool
	fenced          bool // run the calls inside code fences too
	formats         formatsFlag
	results         string // a textproto.ResultFormats entry, or "" for the readable report
}

// maxParallelCalls bounds the calls --parallel has in flight at once; the
// daemon's own limits ([node] max_concurrent, a tool's max_concurrent and
// the queue) still decide how many of them run.
const maxParallelCalls = toolhost.DefaultMaxConcurrent

// runTextCalls parses a model's reply and runs each call it holds through
// the daemon, as `vcpnode call` runs one: one after another in the order of
// the reply, or all at once with --parallel; either way the results are
// printed in the order of the calls.
func (a *app) runTextCalls(cmd *cobra.Command, f *controlFlags, name string, opt textCallOptions) error {
	popt, err := opt.formats.options(opt.fuzzy)
	if err != nil {
		return err
	}
	reply, err := a.readReply(cmd, name)
	if err != nil {
		return err
	}
	res := textproto.Parse(reply, popt)
	printRejected(a.stderr, res.Rejected)
	calls := res.Calls
	if !opt.fenced {
		calls = skipExamples(a.stderr, calls)
	}
	if len(calls) == 0 {
		if len(res.Calls) > 0 {
			return fmt.Errorf("%w outside code fences (%d example(s) skipped, see above)", errNoCalls, len(res.Calls))
		}
		return noCallsError(res)
	}
	c, ctx, done, err := a.controlClient(cmd.Context(), f, 0)
	if err != nil {
		return err
	}
	defer done()
	if f.json {
		opt.results = textproto.ResultsJSON
	}
	textproto.EnsureIDs(calls) // every result format can name its call
	answers := runCalls(ctx, c, calls, opt.parallel)
	results := make([]TextCallResult, 0, len(calls))
	failed := 0
	for i, call := range calls {
		ans := <-answers[i]
		if ans.err != nil {
			return fmt.Errorf("call %d of %d (%s, line %d): %w", i+1, len(calls), call.Tool, call.Line, ans.err)
		}
		results = append(results, TextCallResult{Call: call, Response: ans.resp})
		if !ans.resp.OK {
			failed++
		}
		if opt.results == "" {
			printTextCall(a.stdout, i, len(calls), call, ans.resp)
		}
	}
	if err := writeResults(a.stdout, opt.results, results); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%w: %d of %d calls failed", errToolFailed, failed, len(calls))
	}
	return nil
}

// skipExamples leaves out the calls inside code fences, saying so for each:
// a reply that shows how a call looks must not make it.
func skipExamples(w io.Writer, calls []textproto.Call) []textproto.Call {
	out := make([]textproto.Call, 0, len(calls))
	for _, c := range calls {
		if c.Example {
			fmt.Fprintf(w, "line %d: %s call of %s not run: it is inside a code fence, an example (--fenced runs it)\n", c.Line, c.Format, c.Tool)
			continue
		}
		out = append(out, c)
	}
	return out
}

// callAnswer is one call's answer from the daemon.
type callAnswer struct {
	resp controlapi.CallResponse
	err  error
}

// runCalls starts the calls and returns one channel per call that gets
// its answer: in turn, or with parallel up to maxParallelCalls at once.
func runCalls(ctx context.Context, c *controlapi.ControlClient, calls []textproto.Call, parallel bool) []chan callAnswer {
	answers := make([]chan callAnswer, len(calls))
	for i := range answers {
		answers[i] = make(chan callAnswer, 1)
	}
	run := func(i int) error {
		resp, err := c.Call(ctx, controlapi.CallRequest{Tool: calls[i].Tool, Args: calls[i].Args})
		answers[i] <- callAnswer{resp, err}
		return err
	}
	if !parallel {
		go func() {
			for i := range calls {
				if run(i) != nil {
					return // nothing is run after a call that could not be made
				}
			}
		}()
		return answers
	}
	slots := make(chan struct{}, maxParallelCalls)
	var wg sync.WaitGroup
	go func() {
		for i := range calls {
			slots <- struct{}{}
			wg.Go(func() {
				defer func() { <-slots }()
				_ = run(i) // the error is the answer
			})
		}
		wg.Wait()
	}()
	return answers
}

// printTextCall writes one call's answer for a person to read.
func printTextCall(w io.Writer, i, n int, call textproto.Call, resp controlapi.CallResponse) {
	took := ctlAge(time.Duration(resp.DurationMs) * time.Millisecond)
	if !resp.OK {
		fmt.Fprintf(w, "call %d of %d, line %d: %s failed (%s, request %s, after %s):\n%s\n",
			i+1, n, call.Line, resp.Tool, resp.Outcome, resp.RequestID, took, resp.Error)
		return
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, resp.Result, "", "  "); err != nil {
		pretty.Reset()
		pretty.Write(resp.Result)
	}
	fmt.Fprintf(w, "call %d of %d, line %d: %s ok after %s (request %s):\n%s\n",
		i+1, n, call.Line, resp.Tool, took, resp.RequestID, pretty.Bytes())
}

// writeResults writes the results in a result format; "" writes nothing
// (the readable report was printed call by call).
func writeResults(w io.Writer, format string, results []TextCallResult) error {
	if format == "" {
		return nil
	}
	if format == textproto.ResultsJSON {
		return writeJSON(w, results)
	}
	trs := make([]textproto.ToolResult, len(results))
	for i, r := range results {
		trs[i] = controlapi.CallAnswer{ID: r.Call.ID, Response: r.Response}.ToolResult()
	}
	text, err := textproto.FormatResults(format, trs, time.Now())
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, text)
	return err
}

package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// Asynchronous plugins (VCPToolBox's Plugin.js) answer at once with a JSON
// object, then keep working and report through the callback URL. The call
// returns at the first answer object; the process stays under the host's
// watch until it ends, until Options.AsyncMaxRuntime (counted from its
// start), or until Close.

// asyncPoll is how often a finished run's tree is checked for processes
// that outlive the leader without holding its output.
const asyncPoll = time.Second

// runAsync runs an asynchronous plugin until its first answer.
func (h *Host) runAsync(ctx context.Context, spec *runSpec, stdin []byte) (any, error) {
	rctx, release := h.runContext(ctx)
	defer release()
	p, err := h.start(spec, stdin, false)
	if err != nil {
		return nil, err
	}
	kill := context.AfterFunc(rctx, func() { h.stop(p, context.Cause(rctx)) })
	out := &capture{max: h.opts.MaxOutputBytes, tailMax: outputTailBytes}
	answers := make(chan json.RawMessage, 1)
	go func() { // reads stdout for the process's whole life, so it never blocks on a full pipe
		defer close(p.stdoutDone)
		raw, err := scanAnswer(p.stdout, out)
		if err == nil {
			answers <- raw
		}
		switch {
		case err == nil: // answered: the rest is the worker's log
			n, _ := io.Copy(io.Discard, p.stdout)
			out.total += n
		case errors.Is(err, errCaptureFull): // keep the tail, for a status at the end
			_ = out.readFrom(p.stdout)
		}
	}()
	stoppedErr := func() error { return fmt.Errorf("plugin %q stopped: %w", spec.name, context.Cause(rctx)) }

	select {
	case raw := <-answers:
		return h.answered(p, kill, raw, stoppedErr)
	case <-p.stdoutDone:
		select {
		case raw := <-answers:
			return h.answered(p, kill, raw, stoppedErr)
		default:
		}
		// The output ended without an answer: read the run like a synchronous one.
		<-p.exited
		stopped := !kill()
		if stopped {
			<-p.stopped
		}
		h.finish(p)
		h.retire(p)
		h.logRun(p, out)
		if stopped {
			return nil, p.sb.Explain(stoppedErr(), p.errOut.buf)
		}
		res, err := syncResult(p, out)
		return res, p.sb.Explain(err, p.errOut.buf, out.buf)
	case <-rctx.Done():
		<-p.stopped // the AfterFunc is stopping the tree
		h.finish(p)
		h.retire(p)
		return nil, stoppedErr()
	}
}

// answered hands an answering process to supervise and returns its answer.
func (h *Host) answered(p *process, kill func() bool, raw json.RawMessage, stoppedErr func() error) (any, error) {
	if !kill() { // the call ended just as the plugin answered
		<-p.stopped
		h.finish(p)
		h.retire(p)
		return nil, stoppedErr()
	}
	if p.cb != nil {
		p.cb.claimAnswered(raw)
	}
	go h.supervise(p)
	return answerResult(p.spec.name, raw)
}

// supervise owns an asynchronous plugin's process after it answered: it
// waits for the leader to exit and its output to close, stopping the tree
// at the runtime cap or when the host closes, then retires it (workers that
// outlive the leader stay capped).
func (h *Host) supervise(p *process) {
	ctx, cancel := context.WithTimeoutCause(h.ctx, h.opts.AsyncMaxRuntime-time.Since(p.started), ErrMaxRuntime)
	defer cancel()
	for _, ch := range []chan struct{}{p.exited, p.stdoutDone, p.stderrDone} {
		select {
		case <-ch:
		case <-ctx.Done():
			h.stop(p, context.Cause(ctx))
		}
	}
	h.finish(p)
	h.log.Debug().Str("plugin", p.spec.name).Int("pid", p.pid).Str("exit", p.exitText()).
		Dur("duration", time.Since(p.started)).Msg("asynchronous plugin process finished")
	h.retire(p)
}

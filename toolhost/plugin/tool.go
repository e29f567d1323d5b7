package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/vcpnode/vcpnode/toolhost"
)

// pluginTool is a synchronous or asynchronous plugin as a toolhost.Tool.
type pluginTool struct {
	host  *Host
	spec  toolhost.Spec
	run   *runSpec
	async bool
}

func newTool(h *Host, m *manifest, run *runSpec) *pluginTool {
	t := &pluginTool{
		host:  h,
		run:   run,
		async: m.pluginType == typeAsynchronous,
		spec: toolhost.Spec{
			Name:               m.name,
			DisplayName:        m.displayName,
			Version:            m.version,
			Description:        m.description,
			Commands:           m.commands,
			Timeout:            m.timeout,
			Source:             m.path,
			DistributedExposed: m.exposed,
			Asynchronous:       m.pluginType == typeAsynchronous,
		},
	}
	if t.spec.Timeout == 0 {
		t.spec.Timeout = toolhost.DefaultTimeout
	}
	if t.async && m.push != nil {
		p := *m.push
		t.spec.WebSocketPush = &p
	}
	return t
}

// Spec describes the plugin; it holds no folder, command, config or environment.
func (t *pluginTool) Spec() toolhost.Spec { return t.spec }

// Invoke runs the plugin once with call.Args as a JSON object on stdin. The
// dispatcher owns the deadline: when ctx ends the process group is stopped
// and Invoke returns.
func (t *pluginTool) Invoke(ctx context.Context, call toolhost.Call) (any, error) {
	stdin, err := encodeArgs(call.Args)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: %w", t.spec.Name, err)
	}
	if t.async {
		return t.host.runAsync(ctx, t.run, stdin)
	}
	return t.host.runSync(ctx, t.run, stdin)
}

// encodeArgs writes the arguments as one JSON object, "{}" when there are
// none (some plugins fail on empty stdin), without HTML escaping so the
// bytes are what the model wrote.
func encodeArgs(args map[string]json.RawMessage) ([]byte, error) {
	if len(args) == 0 {
		return []byte("{}"), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// runSync runs a synchronous plugin to its end and reads its answer.
func (h *Host) runSync(ctx context.Context, spec *runSpec, stdin []byte) (any, error) {
	rctx, release := h.runContext(ctx)
	defer release()
	p, out, stopped, err := h.runToEnd(rctx, spec, stdin)
	if err != nil {
		return nil, err
	}
	if stopped {
		return nil, p.sb.Explain(fmt.Errorf("plugin %q stopped: %w", spec.name, context.Cause(rctx)), p.errOut.buf)
	}
	res, err := syncResult(p, out)
	return res, p.sb.Explain(err, p.errOut.buf, out.buf)
}

// runToEnd starts a run and reads its stdout until the process ends or rctx
// stops it (stopped); either way the process is reaped and finished.
func (h *Host) runToEnd(rctx context.Context, spec *runSpec, stdin []byte) (p *process, out *capture, stopped bool, err error) {
	p, err = h.start(spec, stdin, true)
	if err != nil {
		return nil, nil, false, err
	}
	kill := context.AfterFunc(rctx, func() { h.stop(p, context.Cause(rctx)) })
	out = &capture{max: h.opts.MaxOutputBytes, tailMax: outputTailBytes}
	_ = out.readFrom(p.stdout) // EOF, or the drain deadline after exit or kill
	close(p.stdoutDone)
	<-p.exited
	stopped = !kill()
	if stopped {
		<-p.stopped
	}
	h.finish(p)
	if !stopped && p.tree.Alive() {
		// No process of a synchronous run outlives it; retire waits for the
		// stop without holding up the answer.
		go h.stop(p, ErrRunEnded)
	}
	h.retire(p)
	h.logRun(p, out)
	return p, out, stopped, nil
}

// syncResult reads a finished run: an answer with a status is trusted
// whatever the exit code (a JSON object without one only after a zero
// exit); without one, a failure is an error quoting stderr and a success is
// the raw text. Output past the cap is read to its end (drained, not
// killed: the plugin's final status is wanted, and a killed plugin may
// leave work half done) but kept only up to the cap plus a short tail; see
// truncatedResult.
func syncResult(p *process, out *capture) (any, error) {
	if out.truncated() {
		return truncatedResult(p, out)
	}
	if raw := findAnswer(out.buf); raw != nil && (p.succeeded() || hasStatus(raw)) {
		return answerResult(p.spec.name, raw)
	}
	if !p.succeeded() {
		return nil, failureError(p, out.buf)
	}
	return rawTextResult(out), nil
}

// logRun writes one debug line per finished run; output sizes, never contents.
func (h *Host) logRun(p *process, out *capture) {
	if out.truncated() {
		h.log.Warn().Str("plugin", p.spec.name).Int64("stdout_bytes", out.total).Int("cap", out.max).
			Msg("plugin output exceeded max_output_bytes; only its start and last bytes were kept")
	}
	h.log.Debug().Str("plugin", p.spec.name).Int("pid", p.pid).Str("exit", p.exitText()).
		Int64("stdout_bytes", out.total).Int64("stderr_bytes", p.errOut.total).
		Bool("shell", p.spec.launch.shell).Dur("duration", time.Since(p.started)).Msg("plugin run finished")
}

package events

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost"
)

// Audit appends one JSON line per finished call to [audit] file. The
// dispatcher already logs every call at info level; the file is a record
// apart from the log, for the owner to keep and grep. It never holds
// argument values.
//
// The file is opened for each line: calls are rare next to the cost of a
// tool, the path follows a reload at once, and a rotated file is simply
// recreated.
type Audit struct {
	file func() string // the [audit] file in force; "" records nothing
	node func() string // the node's name
	log  zerolog.Logger

	mu      sync.Mutex
	failing bool // the last write failed; warn once per failure streak
}

// AuditEntry is one line of the audit file.
type AuditEntry struct {
	Time        time.Time `json:"time"`
	Node        string    `json:"node"`
	Tool        string    `json:"tool"`
	RequestID   string    `json:"requestId"`
	Local       bool      `json:"local,omitempty"`
	Outcome     string    `json:"outcome"`
	Approval    string    `json:"approval,omitempty"`
	DurationMs  float64   `json:"durationMs"`
	QueuedMs    float64   `json:"queuedMs,omitempty"`
	ResultBytes int       `json:"resultBytes,omitempty"`
	Error       string    `json:"error,omitempty"`
}

// NewAudit records to the file file names at each call, read afresh so
// that a reload takes effect at the next call.
func NewAudit(file, node func() string, log zerolog.Logger) *Audit {
	return &Audit{file: file, node: node, log: log}
}

// Check makes sure path can be appended to, creating it (0600) if needed.
func (a *Audit) Check(path string) error {
	if path == "" {
		return nil
	}
	f, err := openAudit(path)
	if err != nil {
		return err
	}
	return f.Close()
}

func openAudit(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit.file: %w", err)
	}
	return f, nil
}

// Record is the dispatcher's observer.
func (a *Audit) Record(rec toolhost.CallRecord) {
	path := a.file()
	if path == "" {
		return
	}
	line, err := json.Marshal(AuditEntry{
		Time: rec.Finished.UTC(), Node: a.node(), Tool: rec.Tool, RequestID: rec.RequestID, Local: rec.Local,
		Outcome: rec.Outcome, Approval: string(rec.Approval), DurationMs: millis(rec.Duration),
		QueuedMs: millis(rec.Queued), ResultBytes: rec.ResultBytes, Error: rec.Error,
	})
	if err != nil {
		return // cannot happen: every field marshals
	}
	// The tool name, request id and error came from the server or a tool.
	line = append([]byte(config.Redact(string(line))), '\n')

	a.mu.Lock()
	defer a.mu.Unlock()
	err = appendLine(path, line)
	switch {
	case err != nil && !a.failing:
		a.failing = true
		a.log.Error().Err(err).Msg("cannot write the audit file; calls are still logged (said once until it works again)")
	case err == nil && a.failing:
		a.failing = false
		a.log.Info().Str("file", path).Msg("audit file writable again")
	}
}

func appendLine(path string, line []byte) error {
	f, err := openAudit(path)
	if err != nil {
		return err
	}
	_, err = f.Write(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("audit.file: %w", err)
	}
	return nil
}

// millis is d in milliseconds with microsecond precision.
func millis(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

package feed

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/placeholders"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
)

// staticSource runs a static plugin for the refresher. A run cut by the
// plugin's own timeout is a success with what it printed, as in the
// official hosts; a failed run keeps the previous values.
type staticSource struct{ p *plugin.StaticPlugin }

func (s staticSource) Name() string           { return "plugin " + s.p.Name }
func (s staticSource) Placeholders() []string { return s.p.Placeholders }

func (s staticSource) Run(ctx context.Context) (placeholders.Output, error) {
	out, err := s.p.Run(ctx)
	if err != nil {
		return placeholders.Output{}, err
	}
	if msg, failed := reportedError(out.Stdout); failed {
		// Not a value: the plugin says it failed. The last good value stays.
		return placeholders.Output{}, fmt.Errorf("the plugin reported an error: %s", msg)
	}
	return placeholders.Output{Text: out.Stdout, TimedOut: out.TimedOut, Truncated: out.Truncated}, nil
}

// staticPluginJobs schedules static plugins on their refreshIntervalCron. A
// bad cron is a warning and the plugin runs only at start, as in VCPToolBox.
func staticPluginJobs(static []*plugin.StaticPlugin, pc config.PluginsConfig) ([]placeholders.Job, []string) {
	var jobs []placeholders.Job
	var warnings []string
	for _, p := range static {
		job := placeholders.Job{Source: staticSource{p}, Fingerprint: staticFingerprint(p, pc)}
		if p.Cron != "" {
			s, err := placeholders.ParseCron(p.Cron)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("static plugin %q (%s): refreshIntervalCron: %v; it runs only at start", p.Name, p.Source, err))
			} else {
				job.Schedule = s
			}
		}
		jobs = append(jobs, job)
	}
	return jobs, warnings
}

// staticFingerprint changes when a reload should re-run the plugin: its
// manifest or config.env changed, or the host settings its environment
// comes from. Otherwise the running job (and its schedule) is kept.
func staticFingerprint(p *plugin.StaticPlugin, pc config.PluginsConfig) string {
	return strings.Join([]string{
		p.Name, p.Source, p.Cron, p.Timeout.String(), strings.Join(p.Placeholders, ","),
		fileStamp(p.Source), fileStamp(filepath.Join(filepath.Dir(p.Source), "config.env")),
		fmt.Sprint(pc.PassEnv), pc.EnvFile, fileStamp(pc.EnvFile), fmt.Sprint(pc.MaxOutputBytes),
	}, "\x00")
}

// fileStamp identifies a version of a file by size and modification time.
func fileStamp(path string) string {
	if path == "" {
		return ""
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "missing"
	}
	return fmt.Sprintf("%d@%d", fi.Size(), fi.ModTime().UnixNano())
}

// reportedError recognises the VCP error answer {"status":"error",
// "error":…} (or "message") in a static plugin's output.
func reportedError(stdout string) (string, bool) {
	var v struct {
		Status  string          `json:"status"`
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	text := strings.TrimSpace(stdout)
	if !strings.HasPrefix(text, "{") || json.Unmarshal([]byte(text), &v) != nil || !strings.EqualFold(v.Status, "error") {
		return "", false
	}
	var msg string
	if json.Unmarshal(v.Error, &msg) != nil || msg == "" {
		msg = string(v.Error)
	}
	if msg == "" || msg == "null" {
		msg = v.Message
	}
	if msg == "" {
		msg = "no message"
	}
	return msg, true
}

package observer

import (
	"context"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// notifyTimeout bounds one notification command.
const notifyTimeout = 10 * time.Second

// NewDesktopNotifier returns a function that shows a desktop notification
// for a server approval request with notify-send (Linux and BSDs) or
// osascript (macOS), when present. It never blocks its caller: the command
// runs in the background, and while one still runs the next is skipped.
func NewDesktopNotifier(log zerolog.Logger, getenv func(string) string) func(Approval) {
	busy := make(chan struct{}, 1)
	return func(a Approval) {
		title := "vcpnode: the server asks for approval"
		body := a.Tool
		if a.Maid != "" {
			body += " (asked by " + a.Maid + ")"
		}
		body += " — vcpnode approve " + a.RequestID + " or vcpnode deny " + a.RequestID
		name, args := notifyCommand(title, body)
		path, err := exec.LookPath(name)
		if err != nil {
			log.Debug().Str("command", name).Msg("no desktop notifier found: approval not notified")
			return
		}
		select {
		case busy <- struct{}{}:
		default:
			log.Debug().Msg("a desktop notification is still showing: this one skipped")
			return
		}
		go func() {
			defer func() { <-busy }()
			ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, path, args...)
			cmd.Env = envWithout(getenv)
			if err := cmd.Run(); err != nil {
				log.Warn().Err(err).Str("command", name).Msg("desktop notification failed")
			}
		}()
	}
}

func notifyCommand(title, body string) (string, []string) {
	if runtime.GOOS == "darwin" {
		q := func(s string) string { return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"` }
		return "osascript", []string{"-e", "display notification " + q(body) + " with title " + q(title)}
	}
	return "notify-send", []string{"--app-name=vcpnode", title, body}
}

// envWithout gives the notifier the display variables it needs and nothing
// else (never the key).
func envWithout(getenv func(string) string) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"} {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

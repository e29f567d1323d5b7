package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/controlapi"
)

func newConsoleCmd(a *app) *cobra.Command {
	var f controlFlags
	var noOpen bool
	cmd := &cobra.Command{
		Use:   "console",
		Short: "Open the daemon's web console in a browser (a one-time login URL)",
		Long: "console asks the running daemon for a one-time login URL to its web console\n" +
			"([console] listen), prints it as the last line and opens a browser unless\n" +
			"--no-open. The URL logs one browser in and expires unused after a few minutes.\n" +
			"Only root and the daemon's own user may ask.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, ctx, done, err := a.controlClient(cmd.Context(), &f, controlTimeout)
			if err != nil {
				return err
			}
			defer done()
			res, err := c.ConsoleLogin(ctx)
			if apiErr := (*controlapi.APIError)(nil); errors.As(err, &apiErr) && apiErr.Status == http.StatusConflict {
				return fmt.Errorf("%s; then run vcpnode console again", apiErr.Message)
			}
			if err != nil {
				return err
			}
			if f.json {
				return writeJSON(a.stdout, res)
			}
			if !noOpen {
				if err := a.open(res.URL); err != nil {
					fmt.Fprintf(a.stderr, "could not open a browser (%v); open the URL below yourself\n", err)
				}
			}
			_, err = fmt.Fprintf(a.stdout, "Log in within %s (the link works once):\n%s\n",
				ctlAge(time.Until(res.Expires).Round(time.Second)), res.URL)
			return err
		},
	}
	f.add(cmd, true)
	cmd.Flags().BoolVar(&noOpen, "no-open", false, "only print the login URL")
	return cmd
}

// open starts the desktop's browser on url without waiting for it.
func (a *app) open(url string) error {
	if a.openURL != nil {
		return a.openURL(url)
	}
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return fmt.Errorf("no %s", name)
	}
	cmd := exec.Command(path, url)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() //nolint:errcheck // the browser's fate is not ours
	return nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/placeholders/feed"
	"github.com/vcpnode/vcpnode/toolconfig"
)

// Widths of the columns of `vcpnode placeholders`; --json shows everything.
const (
	placeholderValueWidth = 48
	placeholderErrorWidth = 60
)

func newPlaceholdersCmd(a *app) *cobra.Command {
	var f controlFlags
	var local bool
	cmd := &cobra.Command{
		Use:   "placeholders",
		Short: "List the {{placeholders}} this node feeds the server",
		Long: "placeholders lists each placeholder with its value, source, age and last error,\n" +
			"as the running daemon has them. With --local it needs no daemon: it runs every\n" +
			"source of the config once, here, and lists the outcome.",
		Example: "  vcpnode placeholders\n" +
			"  vcpnode placeholders --local --config ~/.config/vcpnode/config.toml",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var resp controlapi.PlaceholdersResponse
			var warnings []string
			var err error
			if local {
				var path string
				if path, err = a.configPath(f.config); err != nil {
					return err
				}
				resp, warnings, err = a.evaluatePlaceholders(cmd.Context(), path)
			} else {
				resp, err = a.daemonPlaceholders(cmd.Context(), &f)
			}
			if err != nil {
				return err
			}
			for _, w := range warnings {
				fmt.Fprintln(a.stderr, "warning: "+config.Redact(w))
			}
			if f.json {
				return writeJSON(a.stdout, resp)
			}
			return printPlaceholders(a.stdout, resp)
		},
	}
	f.add(cmd, true)
	cmd.Flags().BoolVar(&local, "local", false, "run the config's sources once here instead of asking the daemon")
	return cmd
}

// evaluatePlaceholders runs the sources of the config at path once.
func (a *app) evaluatePlaceholders(ctx context.Context, path string) (controlapi.PlaceholdersResponse, []string, error) {
	cfg, err := config.Load(path, toolconfig.Check)
	if err != nil {
		return controlapi.PlaceholdersResponse{}, nil, err
	}
	log, err := a.logger(cfg.Log)
	if err != nil {
		return controlapi.PlaceholdersResponse{}, nil, err
	}
	return feed.Evaluate(ctx, cfg, a.protectedFiles(path), log)
}

// daemonPlaceholders asks the running daemon, found the way every control
// command finds it.
func (a *app) daemonPlaceholders(ctx context.Context, f *controlFlags) (controlapi.PlaceholdersResponse, error) {
	socket, err := a.controlSocket(f)
	if err != nil {
		return controlapi.PlaceholdersResponse{}, err
	}
	c := controlapi.NewControlClient(socket)
	defer c.Close()
	resp, err := c.Placeholders(ctx)
	if errors.Is(err, controlapi.ErrNotRunning) {
		return resp, fmt.Errorf("%w; or pass --local to evaluate the placeholders without it", err)
	}
	return resp, err
}

func printPlaceholders(w io.Writer, resp controlapi.PlaceholdersResponse) error {
	if len(resp.Placeholders) == 0 {
		_, err := fmt.Fprintln(w, "no placeholders: none are configured, and no static plugin declares any")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tSOURCE\tAGE\tERROR")
	for _, p := range resp.Placeholders {
		value := "(none yet)"
		if p.HasValue {
			value = ctlClip(p.Value, placeholderValueWidth)
		}
		age := "-"
		if p.UpdatedAt != nil {
			age = resp.Now.Sub(*p.UpdatedAt).Round(time.Second).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Key, value, p.Source, age, ctlClip(p.LastError, placeholderErrorWidth))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(resp.Sources) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SOURCE\tRUNS\tSKIPPED BUSY\tSKIPPED TOO SOON\tNEXT RUN")
	for _, s := range resp.Sources {
		next := "-"
		switch {
		case s.Running:
			next = "running now"
		case s.NextRun != nil:
			next = "in " + s.NextRun.Sub(resp.Now).Round(time.Second).String()
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", s.Name, s.Runs, s.SkippedBusy, s.SkippedTooSoon, next)
	}
	return tw.Flush()
}

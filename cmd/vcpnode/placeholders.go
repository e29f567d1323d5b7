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
	"github.com/vcpnode/vcpnode/node"
)

func init() { extraCommands = append(extraCommands, newPlaceholdersCmd) }

// Widths of the columns of `vcpnode placeholders`; --json shows everything.
const (
	placeholderValueWidth = 48
	placeholderErrorWidth = 60
)

func newPlaceholdersCmd(a *app) *cobra.Command {
	var configFlag, socketFlag string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "placeholders",
		Short: "List the {{placeholders}} this node feeds the server",
		Long: "placeholders lists each placeholder with its value, source, age and last error,\n" +
			"as the running daemon has them. With --config it needs no daemon: it runs every\n" +
			"source the config defines once and lists the outcome.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var resp node.PlaceholdersResponse
			var warnings []string
			var err error
			if configFlag != "" {
				resp, warnings, err = a.evaluatePlaceholders(cmd.Context(), configFlag)
			} else {
				resp, err = a.daemonPlaceholders(cmd.Context(), socketFlag)
			}
			if err != nil {
				return err
			}
			for _, w := range warnings {
				fmt.Fprintln(a.stderr, "warning: "+config.Redact(w))
			}
			if asJSON {
				return writeJSON(a.stdout, resp)
			}
			return printPlaceholders(a.stdout, resp)
		},
	}
	cmd.Flags().StringVarP(&configFlag, "config", "c", "", "evaluate this config file once instead of asking the daemon")
	cmd.Flags().StringVar(&socketFlag, "socket", "", "the daemon's control socket (default: where `vcpnode run` listens)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// evaluatePlaceholders runs the sources of the config at path once.
func (a *app) evaluatePlaceholders(ctx context.Context, path string) (node.PlaceholdersResponse, []string, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return node.PlaceholdersResponse{}, nil, err
	}
	log, err := a.logger(cfg.Log)
	if err != nil {
		return node.PlaceholdersResponse{}, nil, err
	}
	return node.EvaluatePlaceholders(ctx, cfg, log)
}

// daemonPlaceholders asks the running daemon, found the way every control
// command finds it (--config here means a one-shot evaluation instead).
func (a *app) daemonPlaceholders(ctx context.Context, socketFlag string) (node.PlaceholdersResponse, error) {
	socket, err := a.controlSocket(&controlFlags{socket: socketFlag})
	if err != nil {
		return node.PlaceholdersResponse{}, err
	}
	c := node.NewControlClient(socket)
	defer c.Close()
	resp, err := c.Placeholders(ctx)
	if errors.Is(err, node.ErrNotRunning) {
		return resp, fmt.Errorf("%w; or pass --config FILE to evaluate the placeholders without it", err)
	}
	return resp, err
}

func printPlaceholders(w io.Writer, resp node.PlaceholdersResponse) error {
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

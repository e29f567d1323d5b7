package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
)

func newReloadCmd(a *app) *cobra.Command {
	return queryCmd(a, &cobra.Command{
		Use:   "reload",
		Short: "Make the running daemon re-read its config file (like SIGHUP)",
		Long: "reload makes the running daemon re-read the config file it was started with, the\n" +
			"same as SIGHUP or `systemctl reload vcpnode`. The new config is checked first: if\n" +
			"anything is wrong, the daemon keeps the old one and this command prints every\n" +
			"problem and exits 1. Otherwise it prints what changed and whether the daemon\n" +
			"reconnected (the server cannot update a registered tool set any other way).",
	}, (*controlapi.ControlClient).Reload, printReload)
}

func printReload(w io.Writer, rep controlapi.ReloadResponse) error {
	if len(rep.Changed) == 0 && len(rep.Warnings) == 0 {
		_, err := fmt.Fprintf(w, "reloaded %s: nothing changed\n", rep.ConfigFile)
		return err
	}
	fmt.Fprintf(w, "reloaded %s\n", rep.ConfigFile)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(rep.Changed) > 0 {
		fmt.Fprintf(tw, "changed\t%s\n", strings.Join(rep.Changed, ", "))
	}
	if rep.Reconnected {
		fmt.Fprintf(tw, "reconnected\tyes, so that the server sees the new tools and hub settings\n")
	} else {
		fmt.Fprintf(tw, "reconnected\tno, not needed\n")
	}
	if len(rep.RestartNeeded) > 0 {
		fmt.Fprintf(tw, "needs restart\t%s (these keep their old values until vcpnode restarts)\n", strings.Join(rep.RestartNeeded, "; "))
	}
	for _, warning := range rep.Warnings {
		fmt.Fprintf(tw, "warning\t%s\n", config.Redact(warning))
	}
	return tw.Flush()
}

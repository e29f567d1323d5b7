package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newReconnectCmd(a *app) *cobra.Command {
	var f controlFlags
	cmd := &cobra.Command{
		Use:   "reconnect",
		Short: "Make a disconnected daemon try the server now instead of waiting out its backoff",
		Long: "reconnect cuts the running daemon's wait between connection attempts short, for\n" +
			"when you know the server is back. It does nothing while the daemon is connected\n" +
			"or already connecting.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, ctx, done, err := a.controlClient(cmd, &f, controlTimeout)
			if err != nil {
				return err
			}
			defer done()
			rep, err := c.Reconnect(ctx)
			if err != nil {
				return err
			}
			if f.json {
				return writeJSON(a.stdout, rep)
			}
			_, err = fmt.Fprintf(a.stdout, "%s (the daemon was %s)\n", rep.Message, rep.Phase)
			return err
		},
	}
	f.add(cmd, true)
	return cmd
}

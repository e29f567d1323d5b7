package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/node"
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
			return askDaemon(a, cmd, &f, (*node.ControlClient).Reconnect, func(w io.Writer, rep node.ReconnectResponse) error {
				_, err := fmt.Fprintf(w, "%s (the daemon was %s)\n", rep.Message, rep.Phase)
				return err
			})
		},
	}
	f.add(cmd, true)
	return cmd
}

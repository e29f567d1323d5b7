package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/controlapi"
)

func newRegisterCmd(a *app) *cobra.Command {
	return queryCmd(a, &cobra.Command{
		Use:   "register",
		Short: "Register the tools held back by [node] register = false",
		Long: "register tells a daemon started with [node] register = false to send its tools to\n" +
			"the server: at once on the connection in place, and on every connection after it,\n" +
			"until the daemon stops. Until then the daemon is connected, but the server offers\n" +
			"none of its tools (status says \"tools not registered yet\"). On a daemon whose tools\n" +
			"are registered already it does nothing; in observer mode it is an error.",
	}, (*controlapi.ControlClient).Register, printRegister)
}

func printRegister(w io.Writer, r controlapi.RegisterResponse) error {
	_, err := fmt.Fprintln(w, r.Message)
	return err
}

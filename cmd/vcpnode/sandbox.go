package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/internal/inheritfd"
	"github.com/vcpnode/vcpnode/toolconfig"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

func newSandboxCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Run a command under a sandbox profile as a tool would, learn or check a profile",
		Args:  noSubcommand,
		RunE:  helpAndFail,
	}
	var profile, configFlag, dir string
	run := &cobra.Command{
		Use:   "run [--profile NAME] -- CMD [ARGS...]",
		Short: "Run CMD under a sandbox profile exactly as a tool's process would run",
		Long: "run starts CMD the way the daemon starts a tool's process: confined by the profile\n" +
			"(Landlock for files and TCP, the profile's memory/pids/cpu limits on its own process\n" +
			"tree), with DIR as the tool's own folder and a private TMPDIR removed afterwards. The\n" +
			"profiles are the config's [sandbox] ones (when a config is found) and the built-ins\n" +
			"default, offline and none. It exits with CMD's status: the way to debug a profile.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.sandboxRun(cmd.Context(), configFlag, profile, dir, args)
		},
	}
	run.Flags().StringVarP(&profile, "profile", "p", "", "the `NAME` of the profile (default: the config's sandbox.profile, else \"default\")")
	run.Flags().StringVarP(&configFlag, "config", "c", "", "config `FILE` (its [sandbox] profiles and protected files)")
	run.Flags().StringVar(&dir, "dir", "", "the tool's own folder `DIR`, readable and writable (default: the current directory)")
	cmd.AddCommand(run, newSandboxLearnCmd(a), newSandboxCheckCmd(a))
	return cmd
}

// exitStatus ends vcpnode with a command's exit status, silently.
type exitStatus int

func (e exitStatus) Error() string   { return fmt.Sprintf("exit status %d", int(e)) }
func (e exitStatus) ExitStatus() int { return int(e) }

// sandboxOptions are the sandbox options of the config found from
// configFlag (its profiles and protected files), or the built-ins' when
// there is none.
func (a *app) sandboxOptions(configFlag string) (sandbox.Options, error) {
	configFile := a.findConfig(configFlag)
	if configFile == "" {
		return sandbox.Options{}, nil
	}
	cfg, err := config.Load(configFile, toolconfig.Check)
	if err != nil {
		return sandbox.Options{}, err
	}
	return toolconfig.SandboxOptions(cfg, configFile, a.getenv, a.geteuid())
}

func (a *app) sandboxRun(ctx context.Context, configFlag, profile, dir string, args []string) error {
	opts, err := a.sandboxOptions(configFlag)
	if err != nil {
		return err
	}
	if profile == "" {
		profile = opts.Default
	}
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		dir = wd
	}
	path, err := exec.LookPath(args[0])
	if err != nil {
		return usageErrorf("%v", err)
	}
	// Only stdin, stdout and stderr, as a tool's process gets.
	if err := inheritfd.KeepFromChildren(); err != nil {
		fmt.Fprintf(a.stderr, "vcpnode: warning: %v: CMD inherits the open files vcpnode inherited\n", err)
	}
	trees, err := proctree.New(proctree.Options{})
	if err != nil {
		return err
	}
	defer trees.Close()
	opts.Trees = trees
	sb, err := sandbox.New(opts)
	if err != nil {
		return err
	}
	r, err := sb.Wrap(sandbox.Command{Tool: args[0], Kind: "command", Profile: profile,
		Path: path, Args: args, Env: os.Environ(), Dir: dir})
	if err != nil {
		return err
	}
	defer r.Close()
	// stderr goes through a pipe, as a tool's does, and is also kept (its
	// head) to tell a refusal by the sandbox from any other failure.
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	proc, tree, err := r.StartProcess(trees, &os.ProcAttr{
		Dir: dir, Files: []*os.File{os.Stdin, os.Stdout, pw},
	})
	pw.Close()
	if err != nil {
		pr.Close()
		return err
	}
	var kept headBuffer
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(io.MultiWriter(a.stderr, &kept), pr)
		pr.Close()
	}()
	// The command has its own process group: pass the terminal's signals on.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go func() {
		for s := range sigs {
			tree.Signal(s.(syscall.Signal))
		}
	}()
	state, werr := proc.Wait()
	_ = tree.KillAndWait(5e9)
	tree.Release()
	<-copied // the whole tree has ended: nothing holds the pipe
	if werr != nil {
		return werr
	}
	code := state.ExitCode()
	if code < 0 {
		code = 128 + int(state.Sys().(syscall.WaitStatus).Signal())
	}
	var failed error
	if code != 0 {
		failed = fmt.Errorf("exit status %d", code)
	}
	// What a tool's caller would be told: the profile, and the refusal
	// or the limit reached.
	if lerr := r.Explain(failed, kept.b); lerr != nil && lerr != failed {
		fmt.Fprintln(a.stderr, "vcpnode:", lerr)
	}
	if code != 0 {
		return exitStatus(code)
	}
	return nil
}

// headBuffer keeps the first 64 KiB written to it.
type headBuffer struct{ b []byte }

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := 64<<10 - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// errorExitStatus is the status an exitStatus error asks for.
func errorExitStatus(err error) (int, bool) {
	var st interface{ ExitStatus() int }
	if errors.As(err, &st) {
		return st.ExitStatus(), true
	}
	return 0, false
}

// sandboxLine is the status line of the sandbox: the mechanism, the
// default profile, and how limits are held.
func sandboxLine(sb *controlapi.SandboxStatus) string {
	s := sb.Mechanism
	if sb.LandlockABI > 0 {
		s += fmt.Sprintf(" (ABI %d)", sb.LandlockABI)
	} else if sb.Why != "" {
		s += " (" + sb.Why + ")"
	}
	s += fmt.Sprintf(", default profile %q", sb.Default)
	var limits []string
	for _, l := range [][2]string{{"memory", sb.Memory}, {"pids", sb.Pids}, {"cpu", sb.CPU}} {
		if l[1] != "" {
			limits = append(limits, l[0]+" by "+l[1])
		}
	}
	if len(limits) > 0 {
		s += "; limits: " + strings.Join(limits, ", ")
	}
	if sb.Require {
		s += "; required"
	}
	return s
}

package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

func newSandboxCheckCmd(a *app) *cobra.Command {
	var configFlag string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check [PROFILE]",
		Short: "Say, one protection a line, what a profile keeps a tool from doing on this machine",
		Long: "check lists every protection of a sandbox profile (default: the config's sandbox.profile,\n" +
			"else \"default\") as enforced here or NOT ENFORCED, with the kernel feature it needs, for a\n" +
			"daemon run by the user running check, and then starts a command under the profile and\n" +
			"reports what it saw (capabilities, no_new_privs, the syscall filter, its own /dev/shm).\n" +
			"It fails when the probe contradicts what the machine should enforce, or, with\n" +
			"[sandbox] require = true, when the profile asks for what this machine cannot give.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			profile := ""
			if len(args) == 1 {
				profile = args[0]
			}
			return a.sandboxCheck(configFlag, profile, asJSON)
		},
	}
	cmd.Flags().StringVarP(&configFlag, "config", "c", "", "config `FILE` (its [sandbox] profiles)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the protections as JSON")
	return cmd
}

// sandboxCheckReport is `sandbox check --json`.
type sandboxCheckReport struct {
	Profile     string               `json:"profile"`
	UID         int                  `json:"uid"`
	Mechanism   string               `json:"mechanism"`
	LandlockABI int                  `json:"landlock_abi"`
	Protections []sandbox.Protection `json:"protections"`
	Gaps        []string             `json:"gaps,omitempty"`
	Require     bool                 `json:"require"`
	Caps        sandbox.Capabilities `json:"-"`
}

func (a *app) sandboxCheck(configFlag, profile string, asJSON bool) error {
	opts, err := a.sandboxOptions(configFlag)
	if err != nil {
		return err
	}
	trees, err := proctree.New(proctree.Options{})
	if err != nil {
		return err
	}
	defer trees.Close()
	opts.Trees = trees
	require := opts.Require
	opts.Require = false // the check reports what require would refuse
	if profile != "" {
		opts.Default = profile
		opts.Tools = nil
	}
	sb, err := sandbox.New(opts)
	if err != nil {
		return err
	}
	profile = sb.ProfileFor("")
	uid := a.geteuid()
	ps, err := sb.Protections(profile, uid)
	if err != nil {
		return err
	}
	probe, err := sb.Probe(trees, profile, uid)
	if err != nil {
		ps = append(ps, sandbox.Protection{Name: "probe", State: sandbox.StateNotEnforced, Detail: err.Error()})
	}
	ps = append(ps, probe...)
	caps := sb.Capabilities()
	rep := sandboxCheckReport{Profile: profile, UID: uid, Mechanism: caps.Mechanism, LandlockABI: caps.LandlockABI,
		Protections: ps, Gaps: sb.Gaps(), Require: require}
	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printSandboxCheck(a, rep)
	}
	var failed []string
	for _, p := range probe {
		if p.State == sandbox.StateNotEnforced {
			failed = append(failed, p.Name)
		}
	}
	if err != nil {
		failed = append(failed, "probe")
	}
	switch {
	case len(failed) > 0:
		return fmt.Errorf("sandbox check: the probe under %q saw less than this machine should enforce: %s", profile, strings.Join(failed, ", "))
	case require && len(rep.Gaps) > 0:
		return fmt.Errorf("%w (sandbox.require is set): %s", sandbox.ErrNotEnforced, strings.Join(rep.Gaps, ", "))
	}
	return nil
}

// printSandboxCheck prints one protection a line: its state, what it is,
// and what it needs or how it is held.
func printSandboxCheck(a *app, rep sandboxCheckReport) {
	abi := ""
	if rep.LandlockABI > 0 {
		abi = fmt.Sprintf(" (ABI %d)", rep.LandlockABI)
	}
	fmt.Fprintf(a.stdout, "profile %q for a daemon run as uid %d; %s%s\n", rep.Profile, rep.UID, rep.Mechanism, abi)
	for _, p := range rep.Protections {
		line := fmt.Sprintf("%-13s %s", p.State, p.Name)
		var more []string
		if p.Needs != "" {
			more = append(more, "needs "+p.Needs)
		}
		if p.Detail != "" {
			more = append(more, p.Detail)
		}
		if len(more) > 0 {
			line += " — " + strings.Join(more, "; ")
		}
		fmt.Fprintln(a.stdout, line)
	}
	if len(rep.Gaps) > 0 {
		fmt.Fprintf(a.stdout, "not enforced for the profiles in use: %s", strings.Join(rep.Gaps, ", "))
		if rep.Require {
			fmt.Fprintln(a.stdout, " (sandbox.require refuses to start)")
		} else {
			fmt.Fprintln(a.stdout, " (sandbox.require = true would refuse to start)")
		}
	}
}

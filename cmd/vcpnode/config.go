package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolconfig"
)

func newConfigCmd(a *app) *cobra.Command {
	var configFlag string
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Check or show the configuration",
		Args:  noSubcommand,
		RunE:  helpAndFail,
	}
	cmd.PersistentFlags().StringVarP(&configFlag, "config", "c", "", "config `FILE` ("+configDefaultHelp+")")
	cmd.AddCommand(&cobra.Command{
		Use:   "check",
		Short: "Report every problem in the config file at once (exit 1 if any)",
		Long: "check validates the config file and the key it points to, without printing the key.\n" +
			"It also warns about files holding the key that others can read.",
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			path, err := a.configPath(configFlag)
			if err != nil {
				return err
			}
			return a.checkConfig(path)
		},
	}, &cobra.Command{
		Use:   "show",
		Short: "Print the effective configuration (defaults filled in, key redacted)",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			path, err := a.configPath(configFlag)
			if err != nil {
				return err
			}
			cfg, err := config.Load(path, toolconfig.Check)
			if err != nil {
				return err
			}
			// The console's tool switches apply over the file; say where
			// each comes from.
			var header []string
			if ovPath, err := cfg.OverridesPath(a.getenv, a.geteuid()); err == nil {
				ov, err := config.LoadOverrides(ovPath)
				if err != nil {
					fmt.Fprintf(a.stderr, "warning: %v (the daemon leaves it out)\n", err)
				}
				if lines := ov.Describe(); len(lines) > 0 {
					header = append(header, "# tool switches from "+ovPath+" (set in the web console), applied over the file:")
					for _, l := range lines {
						header = append(header, "#   "+l)
					}
					cfg = ov.Apply(cfg)
				}
			}
			// The owner's remembered answers decide before the file's
			// approval settings.
			if rPath, err := cfg.ApprovalRulesPath(a.getenv, a.geteuid()); err == nil {
				rs, err := toolconfig.LoadApprovalRules(rPath)
				if err != nil {
					fmt.Fprintf(a.stderr, "warning: %v\n", err)
				}
				if lines := toolconfig.DescribeApprovalRules(rs); len(lines) > 0 {
					header = append(header, "# remembered approval answers from "+rPath+" (vcpnode approvals rules), before [tools.NAME] approval:")
					for _, l := range lines {
						header = append(header, "#   "+l)
					}
				}
			}
			// An unset mode follows [observer] enabled: show the one in
			// force, as every other default is shown.
			cfg.Node.Mode = cfg.Mode()
			out, err := toml.Marshal(cfg.Redacted())
			if err != nil {
				return fmt.Errorf("encode config: %w", err)
			}
			fmt.Fprintf(a.stdout, "# %s with defaults filled in; the key is redacted\n", path)
			for _, h := range header {
				fmt.Fprintln(a.stdout, h)
			}
			fmt.Fprintf(a.stdout, "%s", out)
			return nil
		},
	})
	return cmd
}

// checkConfig prints every warning and problem about the config at path,
// and the checks the file's own problems kept from running, then "config
// OK" or an error counting the problems. A file with problems is checked
// as far as what decoded allows: its key, group and plugin folders too.
func (a *app) checkConfig(path string) error {
	part, err := config.LoadPartial(path, toolconfig.Check)
	r, err := a.checkPartial(path, part, err)
	if err != nil {
		return err
	}
	r.warnings = append(r.warnings, config.PermissionWarnings(path, part.Config)...)
	for _, w := range r.warnings {
		fmt.Fprintln(a.stdout, "warning: "+config.Redact(w))
	}
	if err := r.print(a.stdout, path); err != nil {
		return err
	}
	fmt.Fprintln(a.stdout, "config OK")
	return nil
}

// checkResult is what checking a config found.
type checkResult struct {
	warnings []string
	problems []string // each a line, the file's own with their position
	count    int      // problems, counting each of the file's own
	// notChecked are checks the problems kept from running.
	notChecked []string
}

// checkPartial checks part, decoded from path with loadErr, as `config
// check` does (the file's permissions aside).
func (a *app) checkPartial(path string, part config.Partial, loadErr error) (checkResult, error) {
	var ce *config.Error
	if loadErr != nil && !errors.As(loadErr, &ce) {
		return checkResult{}, loadErr
	}
	cfg := part.Config
	setup := a.setupProblems(path, part)
	var r checkResult
	if setup.hosted != nil {
		if part.Lost("tools") == "" {
			r.warnings = append(r.warnings, unknownCommandWarnings(path, part, setup.hosted, func() map[string][]string {
				return a.liveCommands(path)
			})...)
		}
	}
	r.warnings = append(r.warnings, toolconfig.Warnings(cfg)...)
	r.warnings = append(r.warnings, setup.warnings...)
	if ce != nil {
		r.problems = append(r.problems, ce.Error())
		r.count += len(ce.Problems)
	}
	for _, p := range setup.problems {
		r.problems = append(r.problems, path+": "+p)
	}
	r.count += len(setup.problems)
	r.notChecked = setup.notChecked
	return r, nil
}

// print writes the problems and what was not checked, and returns an
// error counting the problems when there is any.
func (r checkResult) print(w io.Writer, path string) error {
	for _, p := range r.problems {
		fmt.Fprintln(w, config.Redact(p))
	}
	for _, s := range r.notChecked {
		fmt.Fprintln(w, config.Redact("not checked: "+s))
	}
	if r.count > 0 || len(r.notChecked) > 0 {
		return fmt.Errorf("%s: %s", path, count(r.count, "problem"))
	}
	return nil
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// liveCommands are the command names of each tool of the daemon running
// with the config at path, or nil when none answers on its socket.
func (a *app) liveCommands(path string) map[string][]string {
	c, ctx, done, err := a.controlClient(context.Background(), &controlFlags{config: path}, 5*time.Second)
	if err != nil {
		return nil
	}
	defer done()
	tools, err := c.Tools(ctx)
	if err != nil {
		return nil
	}
	out := map[string][]string{}
	for _, t := range tools {
		var names []string
		for _, c := range t.Commands {
			if c.Command != "" {
				names = append(names, c.Command)
			}
		}
		out[t.Name] = names
	}
	return out
}

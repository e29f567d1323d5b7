package main

import (
	"errors"
	"fmt"

	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/config"
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
			cfg, err := config.Load(path)
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
	part, err := config.LoadPartial(path)
	var ce *config.Error
	if err != nil && !errors.As(err, &ce) {
		return err
	}
	cfg := part.Config
	setup := a.setupProblems(part)
	var warnings []string
	if setup.hosted != nil {
		if bad := part.Lost("tools"); bad != "" {
			setup.skip("the [tools.NAME] names", hasProblem(bad))
		} else {
			warnings = append(warnings, unknownToolWarnings(cfg, setup.hosted)...)
		}
	}
	warnings = append(warnings, config.PermissionWarnings(path, cfg)...)
	warnings = append(warnings, cfg.Warnings()...)

	for _, w := range warnings {
		fmt.Fprintln(a.stdout, "warning: "+config.Redact(w))
	}
	n := len(setup.problems)
	if ce != nil {
		fmt.Fprintln(a.stdout, config.Redact(ce.Error()))
		n += len(ce.Problems)
	}
	for _, p := range setup.problems {
		fmt.Fprintln(a.stdout, config.Redact(path+": "+p))
	}
	for _, s := range setup.notChecked {
		fmt.Fprintln(a.stdout, config.Redact("not checked: "+s))
	}
	if n > 0 || len(setup.notChecked) > 0 {
		return fmt.Errorf("%s: %s", path, count(n, "problem"))
	}
	fmt.Fprintln(a.stdout, "config OK")
	return nil
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

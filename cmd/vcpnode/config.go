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

// checkConfig prints every problem and warning about the config at path,
// then "config OK" or an error counting the problems.
func (a *app) checkConfig(path string) error {
	cfg, err := config.Load(path)
	var ce *config.Error
	switch {
	case errors.As(err, &ce):
		fmt.Fprintln(a.stdout, config.Redact(ce.Error()))
		return fmt.Errorf("%s: %s", path, count(len(ce.Problems), "problem"))
	case err != nil:
		return err
	}

	problems, hosted := a.setupProblems(cfg)
	var warnings []string
	if hosted != nil {
		warnings = append(warnings, unknownToolWarnings(cfg, hosted)...)
	}
	warnings = append(warnings, config.PermissionWarnings(path, cfg)...)
	warnings = append(warnings, cfg.Warnings()...)

	for _, w := range warnings {
		fmt.Fprintln(a.stdout, "warning: "+config.Redact(w))
	}
	for _, p := range problems {
		fmt.Fprintln(a.stdout, config.Redact(path+": "+p))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: %s", path, count(len(problems), "problem"))
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

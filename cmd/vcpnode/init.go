package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolconfig"
)

type initFlags struct {
	hub, name, keyFile, config string
	plugins                    []string
	keyStdin, force            bool
}

func newInitCmd(a *app, h *host) *cobra.Command {
	var f initFlags
	cmd := &cobra.Command{
		Use:   "init --hub URL [--name NAME]",
		Short: "Write a commented config and a 0600 key file, then check them",
		Long: "init writes a config made from config.example.toml (every setting documented,\n" +
			"the hub's filled in) and puts the key in a separate file readable only by you.\n" +
			"The key is read without echo at a prompt, or from stdin when it is not a\n" +
			"terminal or with --key-stdin; it is never printed. An existing config or key\n" +
			"file is never replaced without --force (an existing key file is kept and used).\n" +
			"The result is checked as `vcpnode config check` does.\n\n" +
			"Default paths: /etc/vcpnode/config.toml as root (macOS: /usr/local/etc/vcpnode),\n" +
			"else ~/.config/vcpnode/config.toml; the key file goes beside the config.",
		Example: "  vcpnode init --hub wss://vcp.example.org --name laptop\n" +
			"  pass show vcp/key | sudo vcpnode init --hub ws://10.0.0.5:6005 --name build-box --key-stdin",
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error { return a.runInit(h, f) },
	}
	cmd.Flags().StringVar(&f.hub, "hub", "", "the VCP main server's base `URL` (http, https, ws or wss); required")
	cmd.Flags().StringVar(&f.name, "name", "", "this node's `NAME` on the server (default: the hostname)")
	cmd.Flags().StringVar(&f.keyFile, "key-file", "", "`FILE` to keep the key in (default: key, beside the config)")
	cmd.Flags().StringVarP(&f.config, "config", "c", "", "config `FILE` to write (default $"+envConfig+", else the usual place)")
	cmd.Flags().StringArrayVar(&f.plugins, "plugins", nil, "a VCP Plugin `DIR` to host ([plugins] dirs); repeat for more")
	cmd.Flags().BoolVar(&f.keyStdin, "key-stdin", false, "read the key from stdin without prompting")
	cmd.Flags().BoolVar(&f.force, "force", false, "replace an existing config and key file")
	return cmd
}

func (a *app) runInit(h *host, f initFlags) error {
	if f.hub == "" {
		return usageErrorf("--hub is required: the main server's base URL, e.g. --hub ws://127.0.0.1:6005")
	}
	system := h.euid == 0
	cfgPath, err := a.scopeConfigPath(h, f.config, system)
	if err != nil {
		return err
	}
	keyFile := filepath.Join(filepath.Dir(cfgPath), "key")
	if f.keyFile != "" {
		if keyFile, err = filepath.Abs(f.keyFile); err != nil {
			return fmt.Errorf("--key-file %q: %w", f.keyFile, err)
		}
	}
	dirs := make([]string, len(f.plugins))
	for i, d := range f.plugins {
		if dirs[i], err = filepath.Abs(d); err != nil {
			return fmt.Errorf("--plugins %q: %w", d, err)
		}
	}
	values := configValues{URL: f.hub, Name: f.name, KeyFile: keyFile, PluginDirs: dirs}
	header := "Written by `vcpnode init`. Every other setting is shown commented out with its\n" +
		"default. The key is in hub.key_file, not here. Check changes with:\n" +
		"  vcpnode config check --config " + cfgPath
	text, err := exampleConfig(values, header)
	if err != nil {
		return err
	}
	// Refuse a bad --hub or --name before anything is written.
	if _, err := config.Parse([]byte(text), cfgPath, toolconfig.Check); err != nil {
		return fmt.Errorf("nothing was written: %w", err)
	}
	if _, err := os.Lstat(cfgPath); err == nil && !f.force {
		return fmt.Errorf("%s exists and was left alone: pass --force to replace it, or edit it and run vcpnode config check", cfgPath)
	}

	keepKey := false
	if _, err := os.Lstat(keyFile); err == nil && !f.force {
		keepKey = true
	}
	var key string
	if !keepKey {
		if key, err = readKey(h, f.keyStdin); err != nil {
			return err
		}
	}
	if err := a.precheckInit(cfgPath, values, header, key); err != nil {
		return err
	}

	dirMode, configMode := fs.FileMode(0o700), fs.FileMode(0o600)
	group := ""
	if system {
		// The system service's user reads the config through its group;
		// the key stays root's and reaches the service as a systemd
		// credential.
		dirMode, configMode = 0o755, 0o640
		group = systemGroup
	}
	if err := a.mkdirShown(filepath.Dir(cfgPath), dirMode); err != nil {
		return err
	}
	if keepKey {
		fmt.Fprintf(a.stdout, "kept the existing key file %s (--force replaces it)\n", keyFile)
	} else {
		if err := a.mkdirShown(filepath.Dir(keyFile), 0o700); err != nil {
			return err
		}
		if err := config.WriteFileAtomic(keyFile, []byte(key+"\n"), 0o600); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "wrote the key to %s (mode 0600)\n", keyFile)
	}
	if err := config.WriteFileAtomic(cfgPath, []byte(text), configMode); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "wrote %s (mode %04o%s)\n", cfgPath, configMode, giveToGroup(h, cfgPath, group))

	if err := a.checkConfig(cfgPath); err != nil {
		return err
	}
	run := a.suggest("run", cfgPath)
	if why := a.serviceHost(h).ManagerProblem(system); why != nil {
		fmt.Fprintf(a.stdout, "next: %s   (no service install here: %v)\n", run, why)
		return nil
	}
	scope := ""
	if system {
		scope = " --system"
	}
	fmt.Fprintf(a.stdout, "next: vcpnode service install%s --config %s   (or: %s)\n", scope, cfgPath, run)
	return nil
}

// precheckInit checks the config init is about to write, as `config
// check` would, before anything is written: a plugin folder that is not
// there, a key that does not work, refuse it whole. The key is handed to
// the check through its environment lookup, never written anywhere.
func (a *app) precheckInit(cfgPath string, values configValues, header, key string) error {
	getenv := a.getenv
	if key != "" {
		values.KeyFile = "" // not written yet: the check gets the key itself
	}
	text, err := exampleConfig(values, header)
	if err != nil {
		return err
	}
	check := *a
	check.getenv = func(k string) string {
		if k == config.EnvKey {
			return key // "" when the key file is kept: the file is checked
		}
		return getenv(k)
	}
	part, err := config.ParsePartial([]byte(text), cfgPath, toolconfig.Check)
	r, err := check.checkPartial(cfgPath, part, err)
	if err != nil {
		return err
	}
	var out strings.Builder
	if err := r.print(&out, cfgPath); err != nil {
		fmt.Fprint(a.stdout, out.String())
		return fmt.Errorf("nothing was written: %w", err)
	}
	return nil
}

// mkdirShown is mkdirMode that says when it made the directory.
func (a *app) mkdirShown(dir string, mode fs.FileMode) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := mkdirMode(dir, mode); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "created directory %s (mode %04o)\n", dir, mode)
	return nil
}

// mkdirMode makes dir (and parents) when missing; an existing one keeps its mode.
func mkdirMode(dir string, mode fs.FileMode) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("create directory: %w", err)
	}
	if err := os.MkdirAll(dir, mode); err != nil {
		return fmt.Errorf("create directory: %w", err)
	}
	if err := os.Chmod(dir, mode); err != nil { // MkdirAll's mode passes through the umask
		return fmt.Errorf("create directory: %w", err)
	}
	return nil
}

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"

	vcpnode "github.com/vcpnode/vcpnode"
	"github.com/vcpnode/vcpnode/config"
)

// configValues are the settings filled into config.example.toml; empty
// ones stay commented out at their defaults.
type configValues struct {
	URL, Name, KeyFile string
	PluginDirs         []string
}

// errExampleChanged: config.example.toml no longer has the lines a config is
// made from. A test catches it before a release can.
var errExampleChanged = errors.New("config.example.toml has changed shape")

// exampleConfig is config.example.toml with header on top and the given
// values set in place of their commented defaults, so the written config
// keeps every comment.
func exampleConfig(v configValues, header string) (string, error) {
	lines := strings.SplitAfter(vcpnode.ConfigExample, "\n")
	set := func(table, key, value string) error {
		start := slices.IndexFunc(lines, func(l string) bool { return strings.TrimSpace(l) == "["+table+"]" })
		if start < 0 {
			return fmt.Errorf("%w: no \"[%s]\" line", errExampleChanged, table)
		}
		end := len(lines)
		for i := start + 1; i < len(lines); i++ {
			if strings.HasPrefix(strings.TrimSpace(lines[i]), "[") {
				end = i
				break
			}
		}
		i := indexWithPrefix(lines[start+1:end], "# "+key+" = ")
		if i < 0 {
			return fmt.Errorf("%w: no commented \"%s = \" line in [%s]", errExampleChanged, key, table)
		}
		lines[start+1+i] = key + " = " + value + "\n"
		return nil
	}
	for _, kv := range []struct{ key, value string }{{"url", v.URL}, {"key_file", v.KeyFile}, {"name", v.Name}} {
		if kv.value == "" {
			continue
		}
		if err := set("hub", kv.key, tomlString(kv.value)); err != nil {
			return "", err
		}
	}
	if len(v.PluginDirs) > 0 {
		quoted := make([]string, len(v.PluginDirs))
		for i, d := range v.PluginDirs {
			quoted[i] = tomlString(d)
		}
		if err := set("plugins", "dirs", "["+strings.Join(quoted, ", ")+"]"); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	for l := range strings.Lines(header) {
		b.WriteString("## " + strings.TrimRight(l, "\n") + "\n")
	}
	if header != "" {
		b.WriteString("\n")
	}
	b.WriteString(strings.Join(lines, ""))
	return b.String(), nil
}

func indexWithPrefix(lines []string, prefix string) int {
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return i
		}
	}
	return -1
}

// tomlString quotes s as a TOML basic string; JSON's escapes are a subset.
func tomlString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// readKey reads the key for `init`: a hidden prompt on a terminal, else the
// first line of stdin (--key-stdin forces that). The key is checked, never
// echoed and never part of an error.
func readKey(h *host, fromStdin bool) (string, error) {
	var key string
	if !fromStdin && h.stdinIsTerminal() {
		k, err := h.readHidden("VCP key (the server's VCP_Key; input is hidden): ")
		if err != nil {
			return "", err
		}
		key = k
	} else {
		line, err := bufio.NewReader(io.LimitReader(h.stdin, 4096)).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("read the key from stdin: %w", err)
		}
		key = line
	}
	key = strings.TrimSpace(key)
	if key == "" {
		return "", errors.New("no key given: type it at the prompt, or pipe it in: vcpnode init ... --key-stdin < file")
	}
	probe := config.Default()
	probe.Hub.Key = key
	if _, err := probe.Key(func(string) string { return "" }); err != nil {
		return "", fmt.Errorf("the key was not written: %w", err)
	}
	return key, nil
}

// readHiddenLine prompts on stderr and reads a line from the terminal with
// echo off (stty, present on every Unix), restoring it afterwards.
func readHiddenLine(prompt string) (string, error) {
	stty := func(arg string) error {
		cmd := exec.Command("stty", arg)
		cmd.Stdin = os.Stdin
		return cmd.Run()
	}
	if err := stty("-echo"); err != nil {
		return "", fmt.Errorf("cannot hide the key as it is typed (%w): pipe it in instead: vcpnode init ... --key-stdin < file", err)
	}
	defer func() {
		_ = stty("echo")
		fmt.Fprintln(os.Stderr)
	}()
	fmt.Fprint(os.Stderr, prompt)
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the key: %w", err)
	}
	return line, nil
}

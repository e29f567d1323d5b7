package plugin

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// A plugin gets a small, explicit environment, never the whole daemon's
// (which may hold the VCP key and other secrets). Layers, low to high:
//  1. base: a few daemon variables every program expects (baseEnvKeys, LC_*)
//     and the ones named in Options.PassEnv;
//  2. Options.EnvFile (VCP's global config.env), every key;
//  3. the plugin's own config.env, every key;
//  4. computed: configSchema keys resolved and coerced as VCPToolBox does,
//     DebugMode, PROJECT_BASE_PATH, PYTHONIOENCODING, and for asynchronous
//     plugins CALLBACK_BASE_URL and PLUGIN_NAME_FOR_CALLBACK.
//
// Values are never logged; notices name keys only.

var baseEnvKeys = []string{"PATH", "HOME", "LANG", "TZ", "TMPDIR", "USER", "LOGNAME", "SHELL"}

const (
	envDebugMode      = "DebugMode"
	envProjectBase    = "PROJECT_BASE_PATH"
	envPythonEncoding = "PYTHONIOENCODING"
	envCallbackURL    = "CALLBACK_BASE_URL"
	envCallbackName   = "PLUGIN_NAME_FOR_CALLBACK"
)

// envSources are the layers shared by every plugin of one scan.
type envSources struct {
	base   map[string]string
	global map[string]string
}

// baseEnv picks the base set and passEnv out of environ ("K=V" entries).
func baseEnv(environ []string, passEnv []string) map[string]string {
	want := make(map[string]bool, len(baseEnvKeys)+len(platformEnvKeys)+len(passEnv))
	for _, k := range append(append(baseEnvKeys, platformEnvKeys...), passEnv...) {
		want[envKey(k)] = true
	}
	base := make(map[string]string)
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if want[envKey(k)] || strings.HasPrefix(k, "LC_") {
			base[k] = v
		}
	}
	return base
}

// pluginEnv builds one plugin's environment as sorted "K=V" entries. conf is
// the plugin's config.env; notices report keys that had to be left out.
//
// own are the variables the plugin's own files set (its config.env, its
// manifest's configSchema), which it can write: the sandbox finds its
// grants without them.
func pluginEnv(src envSources, m *manifest, conf map[string]string, projectBase, callbackURL string) (env, own []string, notices []string) {
	vars := make(map[string]string, len(src.base)+len(src.global)+len(conf)+8)
	for _, layer := range []map[string]string{src.base, src.global, conf} {
		for k, v := range layer {
			vars[k] = v
		}
	}
	keys, dropped := resolveSchema(src, m, conf)
	for _, k := range dropped {
		delete(vars, k)
		notices = append(notices, fmt.Sprintf("config key %s is declared integer but its value is not a number; left out of the environment", k))
	}
	for _, k := range keys {
		vars[k.key] = k.value
		own = append(own, k.key)
	}
	for k := range conf {
		own = append(own, k)
	}
	slices.Sort(own)
	own = slices.Compact(own)
	vars[envDebugMode] = debugMode(src, conf)
	vars[envProjectBase] = projectBase
	vars[envPythonEncoding] = "utf-8"
	if m.pluginType == typeAsynchronous {
		if callbackURL != "" {
			vars[envCallbackURL] = callbackURL
		}
		vars[envCallbackName] = m.name
	}

	env = make([]string, 0, len(vars))
	for k, v := range vars {
		if strings.ContainsRune(v, 0) || strings.ContainsRune(k, 0) {
			notices = append(notices, fmt.Sprintf("environment key %s has a NUL byte in its value; left out", k))
			continue
		}
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env, own, notices
}

// resolvedKey is one configSchema key's value after VCPToolBox's rules
// (_getPluginConfig): its text and whether it is an integer or a boolean.
type resolvedKey struct {
	key, value string
	typ        string // "integer", "boolean" or "" (kept as text)
}

// lookupConfig follows VCPToolBox's _getPluginConfig: the plugin's
// config.env (even an empty value) before the global one, then the daemon's.
func lookupConfig(src envSources, conf map[string]string, key string) (string, bool) {
	for _, layer := range []map[string]string{conf, src.global, src.base} {
		if v, ok := layer[key]; ok {
			return v, true
		}
	}
	return "", false
}

// resolveSchema resolves and coerces m's configSchema keys; dropped are
// integer keys whose value is not a number (VCPToolBox leaves them out).
// A key with no value anywhere takes its schema default, if it has one.
func resolveSchema(src envSources, m *manifest, conf map[string]string) (keys []resolvedKey, dropped []string) {
	for _, sk := range m.schema {
		v, ok := lookupConfig(src, conf, sk.key)
		if !ok {
			if !sk.hasDefault {
				continue
			}
			v = sk.def
		}
		k := resolvedKey{key: sk.key, value: v}
		switch strings.ToLower(strings.TrimSpace(sk.typ)) {
		case "integer":
			n, isNum := jsParseInt(v)
			if !isNum {
				dropped = append(dropped, sk.key)
				continue
			}
			k.value, k.typ = n, "integer"
		case "boolean":
			k.value, k.typ = jsBool(v), "boolean"
		}
		keys = append(keys, k)
	}
	return keys, dropped
}

// debugMode is DebugMode as VCPToolBox normalises it: "true" or "false".
func debugMode(src envSources, conf map[string]string) string {
	debug, _ := lookupConfig(src, conf, envDebugMode)
	return jsBool(debug)
}

// envValue returns key's value in env ("K=V" entries), or "".
func envValue(env []string, key string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && envKey(k) == envKey(key) {
			return v
		}
	}
	return ""
}

// jsParseInt renders String(parseInt(s, 10)): leading blanks, an optional
// sign, then the leading digits ("30s" → "30"); no digits → not a number.
func jsParseInt(s string) (string, bool) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	n := 0
	for n < len(s) && '0' <= s[n] && s[n] <= '9' {
		n++
	}
	if n == 0 {
		return "", false
	}
	digits := strings.TrimLeft(s[:n], "0")
	if digits == "" {
		return "0", true // also String(-0) === "0"
	}
	if neg {
		digits = "-" + digits
	}
	return digits, true
}

// jsBool renders String(v).toLowerCase() === 'true'.
func jsBool(v string) string {
	if strings.ToLower(v) == "true" {
		return "true"
	}
	return "false"
}

// withEnv is env (sorted "K=V" entries) with key set to value, in a new slice.
func withEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); envKey(k) != envKey(key) {
			out = append(out, kv)
		}
	}
	out = append(out, key+"="+value)
	slices.Sort(out)
	return out
}

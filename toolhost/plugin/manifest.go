package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// Plugin types, as VCPToolBox's Plugin.js reads pluginType. Only the stdio ones can be hosted.
const (
	typeSynchronous  = "synchronous"
	typeAsynchronous = "asynchronous"
	typeStatic       = "static"
	typeService      = "service"
	typePreprocessor = "messagePreprocessor"
	typeHybrid       = "hybridservice"
)

const (
	manifestFile  = "plugin-manifest.json"
	blockedSuffix = ".block"
	configEnvFile = "config.env"
	protocolStdio = "stdio"
	// protocolDirect marks modules the server loads into its own process.
	protocolDirect = "direct"
)

// manifest is what the host uses of a plugin-manifest.json, checked.
type manifest struct {
	path string // the manifest file

	name, displayName, version, description string
	pluginType                              string
	command                                 string
	timeout                                 time.Duration // 0: not declared
	exposed                                 bool
	commands                                []toolhost.Command
	placeholders                            []string // as written, trimmed
	cron                                    string
	schema                                  []schemaKey
	push                                    *toolhost.WebSocketPush
	// direct plugins (service, hybridservice) are a module to load, script
	// (a clean path inside the plugin folder), instead of a command.
	direct    bool
	script    string
	apiRoutes bool // "hasApiRoutes": true
	// declared are the folders its "sandbox" member declares (the
	// sandbox grants them; Pins keeps them as first seen).
	declared sandbox.Declared

	// notices are problems that were worked around (dropped entries…).
	notices []string
}

// schemaKey is one configSchema entry: its type and optional default.
type schemaKey struct {
	key, typ   string
	def        string
	hasDefault bool
}

// manifestError names the file and the field that is wrong.
type manifestError struct {
	path, field, problem string
}

func (e *manifestError) Error() string {
	if e.field == "" {
		return fmt.Sprintf("%s: %s", e.path, e.problem)
	}
	return fmt.Sprintf("%s: %s: %s", e.path, e.field, e.problem)
}

// errUnsupported marks a valid manifest of a type vcpnode cannot run.
var errUnsupported = errors.New("unsupported plugin type")

// fields is a JSON object's members, kept raw so each field's type can be
// checked and named in the error.
type fields map[string]json.RawMessage

// parseManifest checks data, the manifest at path. A *manifestError means
// the plugin cannot be used; an error wrapping errUnsupported means it is a
// direct-protocol type (m is still filled with its name and type).
func parseManifest(path string, data []byte) (*manifest, error) {
	bad := func(field, format string, a ...any) error {
		return &manifestError{path: path, field: field, problem: fmt.Sprintf(format, a...)}
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 BOM from a Windows editor
	top, err := objectOf(data)
	if err != nil {
		return nil, bad("", "not a JSON object: %v", describeJSONError(data, err))
	}
	m := &manifest{path: path, exposed: true}

	name, ok, err := top.str("name")
	switch {
	case err != nil:
		return nil, bad("name", "%v", err)
	case !ok || name == "":
		return nil, bad("name", "missing or empty; every plugin needs a unique name")
	case name != strings.TrimSpace(name) || strings.IndexFunc(name, unicode.IsControl) >= 0:
		return nil, bad("name", "%q has surrounding blanks or control characters", name)
	}
	m.name = name

	typ, ok, err := top.str("pluginType")
	switch {
	case err != nil:
		return nil, bad("pluginType", "%v", err)
	case !ok || typ == "":
		return nil, bad("pluginType", "missing; want synchronous, asynchronous or static")
	}
	m.pluginType = typ
	switch typ {
	case typeSynchronous, typeAsynchronous, typeStatic:
	case typeService, typeHybrid:
		m.direct = true
	case typePreprocessor:
		return m, fmt.Errorf("%w: pluginType %q rewrites chat messages inside the VCP server; a node has no messages to give it", errUnsupported, typ)
	default:
		return nil, bad("pluginType", "unknown type %q; want synchronous, asynchronous, static, service or hybridservice", typ)
	}

	comm, _, err := top.object("communication")
	if err != nil {
		return nil, bad("communication", "%v", err)
	}
	proto, hasProto, err := comm.str("protocol")
	if err != nil {
		return nil, bad("communication.protocol", "%v", err)
	}
	if m.direct && proto != protocolDirect {
		// VCPToolBox loads a service module only when it says "direct".
		has := "none"
		if hasProto {
			has = strconv.Quote(proto)
		}
		return m, fmt.Errorf("%w: a %s plugin is loaded only with communication.protocol \"direct\" (it has %s)", errUnsupported, typ, has)
	}
	if !m.direct && hasProto && proto != protocolStdio && typ != typeStatic {
		return nil, bad("communication.protocol", "%q: a %s plugin must use \"stdio\"", proto, typ)
	}

	entry, ok, err := top.object("entryPoint")
	if err != nil {
		return nil, bad("entryPoint", "%v", err)
	}
	if !ok {
		if m.direct {
			return nil, bad("entryPoint", "missing; a direct plugin needs entryPoint.script")
		}
		return nil, bad("entryPoint", "missing; a stdio plugin needs entryPoint.command")
	}
	if m.direct {
		if m.script, err = directScript(entry); err != nil {
			return nil, bad("entryPoint.script", "%v", err)
		}
	} else {
		cmd, _, err := entry.str("command")
		if err != nil {
			return nil, bad("entryPoint.command", "%v", err)
		}
		if strings.TrimSpace(cmd) == "" {
			return nil, bad("entryPoint.command", "missing or empty; it is the command run in the plugin folder")
		}
		m.command = strings.TrimSpace(cmd)
	}
	entryTimeout, err := entry.millis("timeout")
	if err != nil {
		return nil, bad("entryPoint.timeout", "%v", err)
	}
	commTimeout, err := comm.millis("timeout")
	if err != nil {
		return nil, bad("communication.timeout", "%v", err)
	}
	// communication.timeout is what both official hosts read; DS also reads
	// entryPoint.timeout, which some manifests use instead.
	m.timeout = firstNonZero(commTimeout, entryTimeout)

	if v, ok := top["distributedExposed"]; ok && !isNull(v) {
		var b bool
		if err := json.Unmarshal(v, &b); err != nil {
			return nil, bad("distributedExposed", "must be true or false, got %s", clip(v))
		}
		m.exposed = b
	}

	m.displayName = m.optionalText(top, "displayName")
	m.description = m.optionalText(top, "description")
	m.version = m.versionText(top)
	if m.displayName == "" {
		m.displayName = m.name
	}
	caps, _, err := top.object("capabilities")
	if err != nil {
		m.note("capabilities", "%v; ignored", err)
	}
	m.commands = m.invocationCommands(caps)
	if typ == typeStatic {
		m.placeholders = m.promptPlaceholders(caps)
		if cron, ok, err := top.str("refreshIntervalCron"); err != nil {
			m.note("refreshIntervalCron", "%v; the plugin runs once at start", err)
		} else if ok {
			m.cron = strings.TrimSpace(cron)
		}
	}
	m.schema = m.configSchema(top)
	if typ == typeAsynchronous {
		m.push = m.webSocketPush(top)
	}
	if v, ok := top["hasApiRoutes"]; ok && string(bytes.TrimSpace(v)) == "true" {
		m.apiRoutes = true
	}
	if v, ok := top["requiresAdmin"]; ok && string(bytes.TrimSpace(v)) == "true" {
		m.note("requiresAdmin", "ignored: vcpnode, like the official node, has no admin auth code to give (DECRYPTED_AUTH_CODE is not set)")
	}
	m.declared = sandbox.ParseDeclared(data)
	return m, nil
}

// directScript reads entryPoint.script: a relative path that stays inside
// the plugin folder.
func directScript(entry fields) (string, error) {
	s, _, err := entry.str("script")
	if err != nil {
		return "", err
	}
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", errors.New("missing or empty; it is the module loaded from the plugin folder")
	case filepath.IsAbs(s) || !filepath.IsLocal(filepath.FromSlash(s)):
		return "", fmt.Errorf("%q must be a path inside the plugin folder", s)
	}
	return filepath.Clean(filepath.FromSlash(s)), nil
}

// firstNonZero returns the first non-zero duration.
func firstNonZero(a, b time.Duration) time.Duration {
	if a != 0 {
		return a
	}
	return b
}

// note records a problem that was worked around, naming the file and field.
func (m *manifest) note(field, format string, a ...any) {
	m.notices = append(m.notices, fmt.Sprintf("%s: %s: %s", m.path, field, fmt.Sprintf(format, a...)))
}

// optionalText reads a descriptive string field; a wrong type is noted and ignored.
func (m *manifest) optionalText(f fields, key string) string {
	s, _, err := f.str(key)
	if err != nil {
		m.note(key, "%v; ignored", err)
	}
	return strings.TrimSpace(s)
}

// versionText accepts "1.0.0" or a bare number such as 1.2.
func (m *manifest) versionText(f fields) string {
	v, ok := f["version"]
	if !ok || isNull(v) {
		return ""
	}
	var n json.Number
	if err := json.Unmarshal(v, &n); err == nil {
		return n.String()
	}
	return m.optionalText(f, "version")
}

// invocationCommands keeps the entries whose fields are strings; others are
// dropped with a notice rather than sent to the server.
func (m *manifest) invocationCommands(caps fields) []toolhost.Command {
	list, ok, err := caps.array("invocationCommands")
	if err != nil {
		m.note("capabilities.invocationCommands", "%v; no commands listed", err)
		return nil
	}
	if !ok {
		return nil
	}
	cmds := make([]toolhost.Command, 0, len(list))
	for i, raw := range list {
		field := fmt.Sprintf("capabilities.invocationCommands[%d]", i)
		entry, err := objectOf(raw)
		if err != nil {
			m.note(field, "not an object; entry dropped")
			continue
		}
		var c toolhost.Command
		var problem string
		for _, k := range []struct {
			key string
			dst *string
		}{{"command", &c.Command}, {"description", &c.Description}, {"example", &c.Example}} {
			if s, _, err := entry.str(k.key); err != nil {
				problem = k.key + ": " + err.Error()
				break
			} else {
				*k.dst = s
			}
		}
		if problem == "" && c.Command == "" {
			s, _, err := entry.str("commandIdentifier")
			if err != nil {
				problem = "commandIdentifier: " + err.Error()
			}
			c.Command = s
		}
		if problem != "" {
			m.note(field, "%s; entry dropped", problem)
			continue
		}
		cmds = append(cmds, c)
	}
	return cmds
}

// promptPlaceholders reads capabilities.systemPromptPlaceholders[].placeholder,
// stripping the braces ("{{X}}" and "X" are the same placeholder).
func (m *manifest) promptPlaceholders(caps fields) []string {
	list, _, err := caps.array("systemPromptPlaceholders")
	if err != nil {
		m.note("capabilities.systemPromptPlaceholders", "%v; ignored", err)
		return nil
	}
	var out []string
	for i, raw := range list {
		field := fmt.Sprintf("capabilities.systemPromptPlaceholders[%d].placeholder", i)
		entry, err := objectOf(raw)
		if err != nil {
			m.note(field, "entry is not an object; dropped")
			continue
		}
		p, _, err := entry.str("placeholder")
		p = strings.TrimSpace(p)
		key := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(p, "{{"), "}}"))
		if err != nil || key == "" {
			m.note(field, "missing or not a string; dropped")
			continue
		}
		out = append(out, p)
	}
	return out
}

// configSchema reads KEY: "type" and KEY: {type, default} entries.
func (m *manifest) configSchema(top fields) []schemaKey {
	raw, ok := top["configSchema"]
	if !ok || isNull(raw) {
		return nil
	}
	obj, err := objectOf(raw)
	if err != nil {
		m.note("configSchema", "not an object of KEY: type entries; ignored (its keys are not coerced or defaulted)")
		return nil
	}
	keys := make([]schemaKey, 0, len(obj))
	for _, key := range sortedKeys(obj) {
		v := obj[key]
		sk := schemaKey{key: key}
		var typ string
		if err := json.Unmarshal(v, &typ); err == nil {
			sk.typ = typ
		} else if entry, err := objectOf(v); err == nil {
			sk.typ, _, _ = entry.str("type")
			if d, ok := entry["default"]; ok && !isNull(d) {
				sk.def, sk.hasDefault = defaultText(d)
			}
		} else {
			m.note("configSchema."+key, "neither a type name nor an object; ignored")
			continue
		}
		keys = append(keys, sk)
	}
	return keys
}

// defaultText renders a default the way JavaScript's String() would for
// scalars; objects and arrays keep their JSON text.
func defaultText(v json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s, true
	}
	var n json.Number
	if json.Unmarshal(v, &n) == nil {
		if f, err := n.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1e15 {
			return fmt.Sprint(int64(f)), true
		}
		return n.String(), true
	}
	return string(bytes.TrimSpace(v)), true
}

// webSocketPush reads the block the server uses to broadcast callbacks.
func (m *manifest) webSocketPush(top fields) *toolhost.WebSocketPush {
	obj, ok, err := top.object("webSocketPush")
	if err != nil {
		m.note("webSocketPush", "%v; ignored", err)
		return nil
	}
	if !ok {
		return nil
	}
	var p toolhost.WebSocketPush
	if v, ok := obj["enabled"]; ok && json.Unmarshal(v, &p.Enabled) != nil {
		m.note("webSocketPush.enabled", "must be true or false; ignored")
		return nil
	}
	var err1, err2 error
	p.MessageType, _, err1 = obj.str("messageType")
	p.TargetClientType, _, err2 = obj.str("targetClientType")
	if err := errors.Join(err1, err2); err != nil {
		m.note("webSocketPush", "%v; ignored", err)
		return nil
	}
	return &p
}

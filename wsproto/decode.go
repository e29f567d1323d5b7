package wsproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// envelope is the outer shape of every frame. Data and Message stay raw
// until the type is known: "message" only matters for connection_ack, and
// plugin broadcasts of unknown types may put anything there.
type envelope struct {
	Type    string          `json:"type"`
	Data    json.RawMessage `json:"data"`
	Message json.RawMessage `json:"message"`
}

// dataDecoder turns the envelope of a known type into its message. The
// envelope's Data is known to be a JSON object.
type dataDecoder func(env *envelope) (Message, error)

var decoders = map[Type]dataDecoder{
	TypeConnectionAck:            decodeConnectionAck,
	TypeRegisterTools:            decodeRegisterTools,
	TypeReportIP:                 decodeReportIP,
	TypeUpdateStaticPlaceholders: decodeUpdateStaticPlaceholders,
	TypeExecuteTool:              decodeExecuteTool,
	TypeToolResult:               decodeToolResult,
	TypeCancelTool:               decodeCancelTool,
	TypePluginCallbackForward:    decodePluginCallbackForward,
}

// utf8Replacement is what invalid UTF-8 becomes, as in encoding/json.
var utf8Replacement = []byte("\uFFFD")

// Decode parses one frame and returns the message as a value of its type
// (ExecuteTool, not *ExecuteTool). A frame whose type this package does not
// know is returned as Unknown with a nil error: the node ignores those.
//
// Every error is a *DecodeError wrapping one of the sentinel errors. Decode
// is as tolerant as the real server where that is harmless: unknown fields
// are ignored and field names match case-insensitively (encoding/json's
// rule); invalid UTF-8 is replaced by U+FFFD, so raw values the node forwards
// are always valid UTF-8. Decode never modifies or retains frame.
func Decode(frame []byte) (Message, error) {
	if !utf8.Valid(frame) {
		frame = bytes.ToValidUTF8(frame, utf8Replacement)
	}
	var env envelope
	if err := json.Unmarshal(frame, &env); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case !errors.As(err, &te):
			return nil, &DecodeError{Err: notJSON("frame", err)}
		case te.Field == "":
			return nil, &DecodeError{Err: notObject("frame", jsonKind(te.Value))}
		default: // only "type" can have the wrong Go type
			return nil, &DecodeError{RequestID: requestIDOf(env.Data),
				Err: wrongType("type", "string", jsonKind(te.Value))}
		}
	}
	if firstByte(frame) != '{' { // the literal null decodes without error
		return nil, &DecodeError{Err: notObject("frame", "null")}
	}
	if env.Type == "" {
		return nil, &DecodeError{RequestID: requestIDOf(env.Data), Err: missing("type")}
	}
	t := Type(env.Type)
	decode, known := decoders[t]
	if !known {
		return Unknown{TypeName: env.Type, Data: env.Data}, nil
	}
	if isAbsent(env.Data) {
		return nil, &DecodeError{Type: t, Err: missing("data")}
	}
	if env.Data[0] != '{' {
		return nil, &DecodeError{Type: t, Err: notObject("data", kindOf(env.Data))}
	}
	m, err := decode(&env)
	if err != nil {
		return nil, &DecodeError{Type: t, RequestID: requestIDOf(env.Data), Err: err}
	}
	return m, nil
}

func decodeConnectionAck(env *envelope) (Message, error) {
	var m ConnectionAck
	if err := unmarshalData(env.Data, &m); err != nil {
		return nil, err
	}
	if !isAbsent(env.Message) {
		if env.Message[0] != '"' {
			return nil, wrongType("message", "string", kindOf(env.Message))
		}
		if err := json.Unmarshal(env.Message, &m.Message); err != nil {
			return nil, notJSON("message", err)
		}
	}
	return m, nil
}

func decodeRegisterTools(env *envelope) (Message, error) {
	var m RegisterTools
	if err := unmarshalData(env.Data, &m); err != nil {
		return nil, err
	}
	if m.Tools == nil {
		return nil, missing("tools")
	}
	for i, tool := range m.Tools {
		if kindOf(tool) != "object" {
			return nil, wrongType("tools["+strconv.Itoa(i)+"]", "object", kindOf(tool))
		}
	}
	return m, nil
}

func decodeReportIP(env *envelope) (Message, error) {
	var m ReportIP
	if err := unmarshalData(env.Data, &m); err != nil {
		return nil, err
	}
	if m.LocalIPs == nil {
		return nil, missing("localIPs")
	}
	return m, nil
}

func decodeUpdateStaticPlaceholders(env *envelope) (Message, error) {
	var m UpdateStaticPlaceholders
	if err := unmarshalData(env.Data, &m); err != nil {
		return nil, err
	}
	if m.Placeholders == nil {
		return nil, missing("placeholders")
	}
	return m, nil
}

func decodeExecuteTool(env *envelope) (Message, error) {
	var m ExecuteTool
	if err := unmarshalData(env.Data, &m); err != nil {
		return nil, err
	}
	if m.RequestID == "" {
		return nil, missing("requestId")
	}
	if m.ToolName == "" {
		return nil, missing("toolName")
	}
	if m.ToolArgs == nil { // absent or null: the server always sends {}
		m.ToolArgs = map[string]json.RawMessage{}
	}
	if isAbsent(m.VCPContext) {
		m.VCPContext = nil
	} else if m.VCPContext[0] != '{' {
		return nil, wrongType("_vcpContext", "object", kindOf(m.VCPContext))
	}
	return m, nil
}

func decodeToolResult(env *envelope) (Message, error) {
	var m ToolResult
	if err := unmarshalData(env.Data, &m); err != nil {
		return nil, err
	}
	if err := checkToolResult(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// checkToolResult holds the rules Decode and Encode share, so that whatever
// decodes also encodes.
func checkToolResult(m *ToolResult) error {
	if m.RequestID == "" {
		return missing("requestId")
	}
	switch m.Status {
	case StatusSuccess:
	case StatusError:
		if m.Error == "" {
			return &fieldError{field: "error", kind: ErrMissingField,
				detail: `missing (required when status is "error")`}
		}
	case "":
		return missing("status")
	default:
		return invalidValue("status", `want "success" or "error", got `+quote(m.Status))
	}
	return nil
}

func decodeCancelTool(env *envelope) (Message, error) {
	var m CancelTool
	if err := unmarshalData(env.Data, &m); err != nil {
		return nil, err
	}
	if m.RequestID == "" {
		return nil, missing("requestId")
	}
	return m, nil
}

func decodePluginCallbackForward(env *envelope) (Message, error) {
	var m PluginCallbackForward
	if err := unmarshalData(env.Data, &m); err != nil {
		return nil, err
	}
	if isAbsent(m.CallbackData) {
		return nil, missing("callbackData")
	}
	if m.CallbackData[0] != '{' {
		return nil, wrongType("callbackData", "object", kindOf(m.CallbackData))
	}
	return m, nil
}

// unmarshalData decodes a data object into v, turning encoding/json's type
// errors into field errors ("toolArgs: want object, got array").
func unmarshalData(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return notJSON("data", err)
	}
	// te.Field is a path of this package's own JSON names
	// ("capabilities.cancelTool"), never a key taken from the frame.
	field, got := te.Field, jsonKind(te.Value)
	// encoding/json reports a bad element of []string or map[string]string
	// under the container's name, with the element's Go type.
	if te.Type.Kind() == reflect.String {
		switch field {
		case "localIPs":
			return wrongType(field, "array of strings", "an array holding a "+got)
		case "placeholders":
			return wrongType(field, "object of strings", "an object holding a "+got)
		}
	}
	return wrongType(field, describe(te.Type), got)
}

// describe names the JSON shape a Go field type expects.
func describe(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return "array of strings"
		}
		return "array"
	case reflect.Map:
		if t.Elem().Kind() == reflect.String {
			return "object of strings"
		}
		return "object"
	case reflect.Struct:
		return "object"
	}
	return t.String()
}

// jsonKind maps encoding/json's UnmarshalTypeError.Value ("bool",
// "number 1e999", …) to the kind names used in this package's errors.
func jsonKind(value string) string {
	switch {
	case value == "bool":
		return "boolean"
	case strings.HasPrefix(value, "number"):
		return "number"
	}
	return value
}

// requestIDOf extracts data.requestId when it is a string, for error
// reports; it ignores every other problem.
func requestIDOf(data []byte) string {
	if firstByte(data) != '{' {
		return ""
	}
	var v struct {
		RequestID string `json:"requestId"`
	}
	_ = json.Unmarshal(data, &v) // best effort: a wrong type leaves ""
	return v.RequestID
}

// isAbsent reports whether a raw field was missing or null.
func isAbsent(raw []byte) bool {
	return len(raw) == 0 || string(raw) == "null"
}

// firstByte returns the first non-space byte of b, or 0.
func firstByte(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}

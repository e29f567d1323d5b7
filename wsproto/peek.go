package wsproto

import (
	"bytes"
	"encoding/json"
)

// PeekCall finds the type and data.requestId of a frame by reading tokens
// only until both are found; it never decodes large values it can skip.
// A node that has no room to decode a frame answers it with what this
// finds. Either is empty when the frame does not hold it as a string.
func PeekCall(frame []byte) (Type, string) {
	dec := json.NewDecoder(bytes.NewReader(frame))
	var typ, id string
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", ""
	}
	for dec.More() && (typ == "" || id == "") {
		key, err := dec.Token()
		if err != nil {
			break
		}
		switch key {
		case "type":
			if t, err := dec.Token(); err == nil {
				typ, _ = t.(string)
			}
		case "data":
			if t, err := dec.Token(); err != nil || t != json.Delim('{') {
				continue
			}
			for dec.More() && id == "" {
				k, err := dec.Token()
				if err != nil {
					break
				}
				if k == "requestId" {
					if t, err := dec.Token(); err == nil {
						id, _ = t.(string)
					}
					continue
				}
				var skip json.RawMessage
				if dec.Decode(&skip) != nil {
					break
				}
			}
			return Type(typ), id // the rest of data is not worth skipping
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return Type(typ), id
			}
		}
	}
	return Type(typ), id
}

package wsproto

import (
	"encoding/json"
	"testing"
)

func TestScalarText(t *testing.T) {
	for raw, want := range map[string]string{
		`"task-1"`: "task-1",
		`42`:       "42",
		`1.5e3`:    "1.5e3",
		`""`:       "",
		`null`:     "",
		``:         "",
		`true`:     "",
		`{"a":1}`:  "",
		`["x"]`:    "",
	} {
		if got := ScalarText(json.RawMessage(raw)); got != want {
			t.Errorf("ScalarText(%s) = %q, want %q", raw, got, want)
		}
	}
}

// A status frame's task id is job_id first, then taskId, either a string
// or a number.
func TestDecodeVCPToolStatusTaskID(t *testing.T) {
	for data, want := range map[string]string{
		`{"job_id":"j1","taskId":"t1"}`: "j1",
		`{"job_id":null,"taskId":7}`:    "7",
		`{"taskId":"t2"}`:               "t2",
		`{"bridgeType":"x"}`:            "",
	} {
		m, err := Decode([]byte(`{"type":"vcp_tool_status","data":` + data + `}`))
		if err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		st, ok := m.(VCPToolStatus)
		if !ok || st.TaskID != want {
			t.Errorf("%s: %#v, want task %q", data, m, want)
		}
	}
}

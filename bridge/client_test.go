package bridge

import (
	"encoding/json"
	"testing"
)

func TestTaskIDOf(t *testing.T) {
	for result, want := range map[string]string{
		`{"taskId":"abc","status":"accepted"}`: "abc",
		`{"taskId":12}`:                        "12",
		`{"taskId":null}`:                      "",
		`{"status":"done"}`:                    "",
		`"taskId"`:                             "",
		`[{"taskId":"x"}]`:                     "",
		``:                                     "",
		`{"taskId":`:                           "",
	} {
		if got := taskIDOf(json.RawMessage(result)); got != want {
			t.Errorf("taskIDOf(%s) = %q, want %q", result, got, want)
		}
	}
}

package plugin

import (
	"net/http"
	"strings"
	"testing"
)

// TestCallbackGrantIsOneRunsOwn: a run's URL posts its plugin's results
// only, for tasks no other run claimed first (by posting, or by naming them
// in its answer), and nothing once revoked.
func TestCallbackGrantIsOneRunsOwn(t *testing.T) {
	sink := &recordingSink{}
	s := startCallbackServer(t, sink)
	a, b, other := s.Grant("VideoGen"), s.Grant("VideoGen"), s.Grant("Wan2.1VideoGen")
	post := func(base, path string) int {
		t.Helper()
		status, _, _ := postCallback(t, http.MethodPost, base+path, []byte(`{"status":"Succeed"}`))
		return status
	}
	if got := post(a.URL(), "/VideoGen/t1"); got != http.StatusOK {
		t.Fatalf("a run posting its own task: %d", got)
	}
	if got := post(a.URL(), "/VideoGen/t1"); got != http.StatusOK {
		t.Errorf("a run posting its own task again (progress): %d", got)
	}
	if got := post(b.URL(), "/VideoGen/t1"); got != http.StatusForbidden {
		t.Errorf("another run of the same plugin posting the first run's task: %d, want 403", got)
	}
	if got := post(other.URL(), "/VideoGen/t2"); got != http.StatusForbidden {
		t.Errorf("another plugin's run posting this plugin's task: %d, want 403", got)
	}
	// A task named in an answer is the answering run's before it posts.
	b.claimAnswered([]byte(`{"status":"success","result":"working on it: {{VCP_ASYNC_RESULT::VideoGen::t3}}"}`))
	b.claimAnswered([]byte(`{"status":"success","result":"ok","requestId":"t4"}`))
	for _, task := range []string{"t3", "t4"} {
		if got := post(a.URL(), "/VideoGen/"+task); got != http.StatusForbidden {
			t.Errorf("posting task %s that another run announced: %d, want 403", task, got)
		}
		if got := post(b.URL(), "/VideoGen/"+task); got != http.StatusOK {
			t.Errorf("the announcing run posting %s: %d", task, got)
		}
	}
	a.Revoke()
	if got := post(a.URL(), "/VideoGen/t5"); got != http.StatusNotFound {
		t.Errorf("a revoked URL: %d, want 404", got)
	}
	if got := post(b.URL(), "/VideoGen/t1"); got != http.StatusForbidden {
		t.Errorf("a task of an ended run, posted by another: %d, want 403", got)
	}
	var tasks []string
	for _, d := range sink.all() {
		tasks = append(tasks, d.plugin+"/"+d.task)
	}
	if got := strings.Join(tasks, " "); got != "VideoGen/t1 VideoGen/t1 VideoGen/t3 VideoGen/t4" {
		t.Errorf("delivered %s", got)
	}
}

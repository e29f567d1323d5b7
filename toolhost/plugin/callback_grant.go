package plugin

import (
	"crypto/rand"
	"encoding/json"
	"regexp"
)

// retiredClaims bounds how many tasks of ended runs stay claimed: a later
// run may not post for them, until enough newer tasks pushed them out.
const retiredClaims = 4096

// CallbackGrant is one run's callback URL: it posts results of its plugin
// only, for tasks it claims, until Revoke.
type CallbackGrant struct {
	s      *CallbackServer
	token  string
	plugin string
	url    string
}

// Grant mints the CALLBACK_BASE_URL of one run of plugin: a fresh random
// token, a secret of that run's processes.
func (s *CallbackServer) Grant(plugin string) *CallbackGrant {
	g := &CallbackGrant{s: s, token: rand.Text(), plugin: plugin} // 130 random bits
	g.url = s.base + g.token
	s.grantsMu.Lock()
	s.grants[g.token] = g
	s.grantsMu.Unlock()
	return g
}

// URL is the grant's CALLBACK_BASE_URL: http://127.0.0.1:PORT/plugin-callback/TOKEN.
func (g *CallbackGrant) URL() string { return g.url }

// granted returns the live grant of token, nil when there is none.
func (s *CallbackServer) granted(token string) *CallbackGrant {
	if token == "" {
		return nil
	}
	s.grantsMu.Lock()
	defer s.grantsMu.Unlock()
	return s.grants[token]
}

// Claim makes task the grant's run's, unless another run claimed it first;
// it reports whether the task is the run's.
func (g *CallbackGrant) Claim(task string) bool {
	s := g.s
	key := g.plugin + "/" + task
	s.grantsMu.Lock()
	defer s.grantsMu.Unlock()
	switch owner, ok := s.claims[key]; {
	case !ok:
		s.claims[key] = g
		return true
	default:
		return owner == g
	}
}

// Revoke ends the grant (its run's processes are gone): its URL posts no
// more, and its tasks stay claimed for a while.
func (g *CallbackGrant) Revoke() {
	s := g.s
	s.grantsMu.Lock()
	defer s.grantsMu.Unlock()
	if s.grants[g.token] != g {
		return
	}
	delete(s.grants, g.token)
	for key, owner := range s.claims {
		if owner == g {
			s.retired = append(s.retired, key)
		}
	}
	for len(s.retired) > retiredClaims {
		delete(s.claims, s.retired[0])
		s.retired = s.retired[1:]
	}
}

// asyncPlaceholder is how an asynchronous plugin's answer names its task
// for the model (spec: {{VCP_ASYNC_RESULT::<PluginName>::<taskId>}}).
var asyncPlaceholder = regexp.MustCompile(`\{\{VCP_ASYNC_RESULT::([A-Za-z0-9_.-]+)::([A-Za-z0-9_-]+)\}\}`)

// claimAnswered claims the tasks an answer announces: the placeholders in
// it and its task id fields, so no other run can post for them first.
func (g *CallbackGrant) claimAnswered(raw json.RawMessage) {
	for _, m := range asyncPlaceholder.FindAllSubmatch(raw, -1) {
		if string(m[1]) == g.plugin {
			g.Claim(string(m[2]))
		}
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return
	}
	if task := firstNameField(obj, "taskId", "task_id", "TaskId", "requestId"); ValidTaskID(task) {
		g.Claim(task)
	}
}

// Package controltest holds what tests of the control API share: the list
// of its routes, which the tests that a tool's process is refused on every
// endpoint walk (control's own and the end-to-end attack of cmd/vcpnode),
// and a client of a server the test started, checked closed at its end.
package controltest

import (
	"net/http"

	"github.com/vcpnode/vcpnode/controlapi"
)

// Endpoint is one route of the control API and a path that reaches it.
type Endpoint struct{ Method, Path string }

// Endpoints is every route of the control API; tool is the tool the
// override route names. A route added to control's server belongs here.
func Endpoints(tool string) []Endpoint {
	return []Endpoint{
		{http.MethodGet, controlapi.PathStatus},
		{http.MethodGet, controlapi.PathTools},
		{http.MethodGet, controlapi.PathPrompt},
		{http.MethodGet, controlapi.PathPlaceholders},
		{http.MethodPost, controlapi.PathCall},
		{http.MethodGet, controlapi.PathMCPTools},
		{http.MethodGet, controlapi.PathServerTools},
		{http.MethodPost, controlapi.PathReload},
		{http.MethodPost, controlapi.PathReconnect},
		{http.MethodPost, controlapi.PathRegister},
		{http.MethodGet, controlapi.PathApprovals},
		{http.MethodPost, controlapi.PathApprovals + "/1/approve"},
		{http.MethodGet, controlapi.PathApprovalRules},
		{http.MethodPost, controlapi.PathForgetRule},
		{http.MethodGet, controlapi.PathEvents},
		{http.MethodPost, "/v1/tools/" + tool + "/override"},
		{http.MethodPost, controlapi.PathParse},
		{http.MethodPost, controlapi.PathResults},
		{http.MethodPost, controlapi.PathConsoleLogin},
	}
}

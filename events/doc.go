// Package events holds what the node tells about itself as it runs: the
// event log (a ring of recent events and its live subscribers, which the
// control API's GET /v1/events streams and `vcpnode watch` prints) and the
// audit trail (one JSON line per finished call in [audit] file), the
// Prometheus metrics (calls counted from their records, gauges read from the
// node) and each tool's call counts for the console.
//
// Publishing never blocks: a subscriber that lags loses its oldest events
// and is told how many. It knows the control API's event type and
// toolhost's call records, nothing of connections or of the node.
package events

// Package controlapi is the daemon's control API as both ends see it: the
// /v1/ paths, the request, response, status and event types, and
// ControlClient, which the CLI commands wrap. It is JSON over HTTP/1.1 on
// a Unix socket; errors are ErrorResponse with a meaningful status code.
//
// It holds no daemon code: the server is package control, the answers come
// from package node. Sharing these types keeps the two ends from drifting.
package controlapi

// Package control serves the daemon's control API: the Unix socket with
// its peer-credential and [control] group checks, the web console (a
// loopback HTTP server that serves the same /v1/ handlers behind a
// one-time login), and the metrics endpoint.
//
// It speaks controlapi's types and reaches the daemon only through
// Backend, an interface declared here and implemented by package node;
// tests drive every handler with a fake backend.
package control

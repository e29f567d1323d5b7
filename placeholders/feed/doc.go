// Package feed keeps the placeholder values a node feeds the hub: it turns
// the config's [placeholders] table, the static plugins of a scan and other
// sources into the refresher's jobs, runs them while the daemon runs,
// describes them for the control API, and gives each hub session a Push
// that sends the snapshot after connecting and the changes after that.
// Evaluate runs every source once, for a check that needs no daemon.
//
// It knows the config and the tool host's static plugins, not the node:
// the node hands it a process tree Manager, a sandbox, a guard for panics
// and, for each session, a function that writes one update.
package feed

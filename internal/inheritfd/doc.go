// Package inheritfd keeps the file descriptors a process inherited from
// the processes it starts: a descriptor a harness or a shell passed down
// without close-on-exec ("3>file", a lock held by flock) never reaches a
// plugin, an interpreter or an MCP server. The daemon calls it before its
// first child starts, and the tests of packages that start children call
// it in TestMain so that what they compare is only what the node controls.
package inheritfd

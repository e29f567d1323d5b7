//go:build unix

package main

import (
	"os"
	"os/user"
	"strconv"
)

// lookupGroupID is the group's id on this machine.
func lookupGroupID(name string) (int, error) {
	g, err := user.LookupGroup(name)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(g.Gid)
}

// systemGroup is the system service's group: the config as root is 0640
// and, once the group exists, belongs to it.
const systemGroup = "vcpnode"

// giveToGroup gives path to group when the group exists here and says so
// for init's output: ", group vcpnode", or why not.
func giveToGroup(h *host, path, group string) string {
	if group == "" {
		return ""
	}
	gid, err := h.groupID(group)
	if err != nil {
		return "; no group " + group + " here yet"
	}
	if err := os.Chown(path, -1, gid); err != nil {
		return "; not given to group " + group + ": " + err.Error()
	}
	return ", group " + group
}

package control

import (
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"slices"
	"strconv"
)

// lookupGroup resolves [control] group, a name or a number, to a gid.
func lookupGroup(name string) (int, error) {
	g, err := user.LookupGroup(name)
	if err != nil {
		if _, numeric := strconv.Atoi(name); numeric != nil {
			return 0, err
		}
		if g, err = user.LookupGroupId(name); err != nil {
			return 0, err
		}
	}
	gid, err := strconv.Atoi(g.Gid)
	if err != nil {
		return 0, fmt.Errorf("group %s has the gid %q", name, g.Gid)
	}
	return gid, nil
}

// inGroup says whether the user uid belongs to the group gid, as its
// primary group or a supplementary one (as the system's group database
// says; the socket's mode has already let only such users connect).
func inGroup(uid, gid int) bool {
	u, err := user.LookupId(strconv.Itoa(uid))
	if err != nil {
		return false
	}
	ids, err := u.GroupIds()
	if err != nil {
		return u.Gid == strconv.Itoa(gid)
	}
	return u.Gid == strconv.Itoa(gid) || slices.Contains(ids, strconv.Itoa(gid))
}

// shareWithGroup gives path to the group gid with mode.
func shareWithGroup(path string, mode fs.FileMode, gid int) error {
	if err := os.Chown(path, -1, gid); err != nil {
		return err
	}
	return os.Chmod(path, mode)
}

package control

import "net"

// peerPID is the pid of the process on the other end of a control
// connection (SO_PEERCRED), 0 when it cannot be told.
func peerPID(c net.Conn) int {
	cred, err := peerCred(c)
	if err != nil {
		return 0
	}
	return int(cred.Pid)
}

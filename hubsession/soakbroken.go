//go:build soakbroken && linux

package hubsession

import (
	"os"
	"os/exec"
	"sync"
	"syscall"

	"github.com/vcpnode/vcpnode/toolhost"
)

// This file is compiled only with -tags soakbroken, by the chaos soak's own
// test (tools/soak), to show that the soak catches a broken daemon. No
// release build contains it. $VCPNODE_SOAKBROKEN says how to break:
//
//	drop-result   the first successful result on each connection after the
//	              first is never sent, the connection staying up
//	leak-process  each connection after the first starts a child process
//	              that nothing waits for or stops
var soakBroken = struct {
	sync.Mutex
	sessions int
	dropOn   *session // the session that has yet to drop its result
}{}

func soakBrokenSessionStarted(s *session) {
	soakBroken.Lock()
	defer soakBroken.Unlock()
	soakBroken.sessions++
	if soakBroken.sessions < 2 {
		return
	}
	switch os.Getenv("VCPNODE_SOAKBROKEN") {
	case "drop-result":
		soakBroken.dropOn = s
	case "leak-process":
		cmd := exec.Command("sleep", "3600")
		// Gone with the daemon, so the soak's machine keeps nothing.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err == nil {
			s.log.Info().Int("pid", cmd.Process.Pid).Msg("soakbroken: leaking a process")
		}
	}
}

func soakBrokenDropsResult(s *session, o toolhost.Outcome) bool {
	soakBroken.Lock()
	defer soakBroken.Unlock()
	if soakBroken.dropOn != s || o.Err != "" {
		return false
	}
	soakBroken.dropOn = nil
	s.log.Info().Str("request_id", o.RequestID).Msg("soakbroken: dropping a result")
	return true
}

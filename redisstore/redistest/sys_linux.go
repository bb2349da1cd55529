package redistest

import "syscall"

// sysProcAttr asks Linux to kill the server if the test binary dies without
// running its cleanups (a timeout panic, a SIGKILL), so that no server
// outlives its test. This is best effort: the signal follows the thread
// that started the server.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

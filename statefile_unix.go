//go:build unix

package throttle

import "syscall"

// readFlags are added to the flags a state file is opened with: opening a
// FIFO for reading would otherwise wait for a writer. O_NONBLOCK changes
// nothing for a regular file.
const readFlags = syscall.O_NONBLOCK

// gone reports whether no process has the given pid (signal 0 checks
// without signalling; EPERM means that one exists).
func gone(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == syscall.ESRCH }

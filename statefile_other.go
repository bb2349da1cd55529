//go:build !unix

package throttle

// readFlags are added to the flags a state file is opened with.
const readFlags = 0

// gone reports whether no process has the given pid. Without signal 0 it
// cannot tell, so only the age of a temporary file makes it stale.
func gone(int) bool { return false }

package realworld_test

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/go-throttle/throttle/realworld"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckListener: a server process started on a port that a listener of
// ours took in the meantime is found out, not driven as if it were that
// listener.
func TestCheckListener(t *testing.T) {
	port := takenPort(t)
	assert.NoError(t, realworld.CheckListener(os.Getpid(), port), "the listener is this process's")

	// A process that never bound the port, as a server that failed to.
	cmd := exec.Command("sleep", "30")
	require.NoError(t, cmd.Start())
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	assert.ErrorIs(t, realworld.CheckListener(cmd.Process.Pid, port), realworld.ErrPortTaken, "the listener is not the child's")
}

// TestNginxOnATakenPort: nginx that cannot bind the port it was handed,
// which a listener of ours holds, fails to start rather than leave its
// client driving that listener (as a table once did: nginx-delay's client
// got counting-bare's answers).
func TestNginxOnATakenPort(t *testing.T) {
	inst, err := realworld.StartNginxOn(takenPort(t))
	if errors.Is(err, realworld.ErrUnavailable) {
		requireAvailable(t, err)
	}
	if err == nil {
		inst.Close()
	}
	assert.ErrorIs(t, err, realworld.ErrPortTaken)
}

// takenPort returns a loopback port that a listener of this process holds
// until t ends. It skips t where checkListener cannot tell (not Linux).
func takenPort(t *testing.T) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("checkListener reads /proc")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

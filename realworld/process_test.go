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
	if runtime.GOOS != "linux" {
		t.Skip("checkListener reads /proc")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
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
	if runtime.GOOS != "linux" {
		t.Skip("checkListener reads /proc")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	inst, err := realworld.StartNginxOn(l.Addr().(*net.TCPAddr).Port)
	if errors.Is(err, realworld.ErrUnavailable) {
		requireAvailable(t, err)
	}
	if err == nil {
		inst.Close()
	}
	assert.ErrorIs(t, err, realworld.ErrPortTaken)
}

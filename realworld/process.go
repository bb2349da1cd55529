package realworld

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// The servers that run as processes of their own (nginx, HAProxy, and the
// Node.js and Python scripts of script.go) are started and stopped alike.

// binary returns the server binary name: on PATH, else in /usr/sbin, where
// Debian's package pkg puts it (root's PATH has it, a user's may not), or an
// error matching [ErrUnavailable] that names the package.
func binary(name, pkg string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	p := filepath.Join("/usr/sbin", name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%w: %s not on PATH nor at %s (apt-get install %s)", ErrUnavailable, name, p, pkg)
	}
	return p, nil
}

// launch starts cmd and waits until it listens on addr. It returns the
// channel its Wait reports on, for terminate; on an error (the process
// exited, or did not listen in time, as output then told) the process is
// stopped and waited for.
func launch(cmd *exec.Cmd, addr string, output func() string) (<-chan error, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if err := awaitListen(addr, exited, output); err != nil {
		_ = cmd.Process.Kill()
		<-exited
		return nil, err
	}
	return exited, nil
}

// awaitListen waits up to 10 s until something listens on addr, or the
// process whose exit exited reports has exited (its output, from output,
// then in the error).
func awaitListen(addr string, exited chan error, output func() string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err // for the caller's Kill and Wait
			return fmt.Errorf("exited (%v): %s", err, output())
		default:
		}
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("did not listen on %s within 10s: %v", addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// terminate stops a server process whose Wait reports on exited: SIGTERM,
// then SIGKILL if it has not exited within 5 s. It returns what Wait
// returned, or an error saying that it had to be killed.
func terminate(cmd *exec.Cmd, exited <-chan error) error {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		return err
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		return errors.New("did not exit within 5s of SIGTERM")
	}
}

// isSignalled reports whether err is Wait's for a process that a signal
// ended.
func isSignalled(err error) bool {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return false
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}

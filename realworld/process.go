package realworld

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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

// launch starts cmd and waits until it listens on 127.0.0.1:port. It
// returns the channel its Wait reports on, for terminate; on an error (the
// process exited, did not listen in time, as output then told, or another
// listener holds the port) the process is stopped and waited for.
func launch(cmd *exec.Cmd, port int, output func() string) (<-chan error, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	err := awaitListen(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), exited, output)
	if err == nil {
		err = checkListener(cmd.Process.Pid, port)
	}
	if err != nil {
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

// errPortTaken is checkListener's error for a port another listener holds.
var errPortTaken = errors.New("another listener holds the port")

// checkListener returns errPortTaken if the socket listening on
// 127.0.0.1:port is not one that process pid holds. A port found free is
// handed to a server process that binds it later (freePort): in between, a
// listener of ours on port 0 may be given the same port (every server of a
// table starts at once), the process then fails to bind, and without this
// check its client would be driving another server. Where /proc/net/tcp
// cannot be read (not Linux), it returns nil; where the process's own
// table cannot (it has exited), an error.
func checkListener(pid, port int) error {
	table, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return nil
	}
	listening := map[string]bool{} // "socket:[inode]" of each listener on the port
	for _, line := range strings.Split(string(table), "\n")[1:] {
		// sl local_address rem_address st ... inode: the address in
		// hex as the kernel stores it, then the port; st 0A is LISTEN.
		f := strings.Fields(line)
		if len(f) < 10 || f[3] != "0A" {
			continue
		}
		addr, p, _ := strings.Cut(f[1], ":")
		loopback := addr == "0100007F" || addr == "7F000001" || addr == "00000000" // either byte order, or any
		if loopback && p == fmt.Sprintf("%04X", port) {
			listening["socket:["+f[9]+"]"] = true
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return fmt.Errorf("port %d: %w", port, err)
	}
	for _, fd := range fds {
		if link, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); listening[link] {
			return nil
		}
	}
	return fmt.Errorf("port %d: %w", port, errPortTaken)
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

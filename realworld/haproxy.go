package realworld

import (
	"bytes"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// HAProxyPath returns the haproxy binary, or an error matching
// [ErrUnavailable].
func HAProxyPath() (string, error) { return binary("haproxy", "haproxy") }

// HAProxy is HAProxy's request-rate limit in the setup its own guides give
// for an API, in front of a backend that answers 200:
//
//	stick-table type ip size 100k expire 30s store http_req_rate(3s)
//	http-request track-sc0 src
//	http-request deny deny_status 429 if { sc_http_req_rate(0) gt 30 }
//
// http_req_rate(3s) is HAProxy's frequency counter: the requests of the
// current 3 s period plus the previous period's count weighted by what is
// left of it (a sliding-window counter), periods aligned to HAProxy's own
// clock. Every tracked request counts, the refused ones too, so a client
// that goes on sending at the steady rate once refused stays refused. It
// sends no rate-limit headers and no Retry-After: a bare 429 with an HTML
// body.
//
// Each [Server.Start] runs its own haproxy (-db: in the foreground, no
// daemon) on a free loopback port, in front of an httptest backend that
// counts what it answers, and Close stops it (SIGTERM, then SIGKILL after
// 5 s).
func HAProxy() Server {
	return Server{
		Name:              "haproxy",
		Algorithm:         "sliding-window counter (stick-table http_req_rate), counts refused",
		Quota:             Quota{Limit: defLimit, Window: defWindow},
		CountsRefused:     true,
		RefusesSteadyRate: true,
		start:             func() (*Instance, error) { return startHAProxy("") },
	}
}

// HAProxyRemaining is [HAProxy] set up to tell what is left and nothing
// else, as Bucket4j's filter does: its frequency counter, read after the
// request was tracked, less from the limit,
//
//	http-request set-var(txn.rate) sc_http_req_rate(0)
//	http-response set-header X-Rate-Limit-Remaining %[int(30),sub(txn.rate)]
//
// and X-Rate-Limit-Remaining: 0 on a 429. No limit, no reset, no window.
func HAProxyRemaining() Server {
	s := HAProxy()
	s.Name, s.Headers = "haproxy-remaining", "X-Rate-Limit-Remaining only (the limit less its request rate)"
	s.start = func() (*Instance, error) { return startHAProxy(haproxyRemaining()) }
	return s
}

// haproxyRemaining is the frontend's part of HAProxyRemaining's setup, for
// the quota SetQuota set last.
func haproxyRemaining() string {
	return fmt.Sprintf(`	http-request set-var(txn.rate) sc_http_req_rate(0)
	http-response set-header X-Rate-Limit-Remaining %%[int(%d),sub(txn.rate)]
`, defLimit)
}

// haproxyConf is the configuration: the port to listen on, the window in
// milliseconds, the frontend's further rules, the limit, the deny's extra
// arguments and the backend's address.
const haproxyConf = `global
	maxconn 4096
defaults
	mode http
	timeout connect 5s
	timeout client 30s
	timeout server 30s
	timeout http-keep-alive 30s
frontend api
	bind 127.0.0.1:%d
	stick-table type ip size 100k expire 30s store http_req_rate(%dms)
	http-request track-sc0 src
%s	http-request deny deny_status 429 %sif { sc_http_req_rate(0) gt %d }
	default_backend ok
backend ok
	server ok %s
`

// denyArgs is what a 429 carries besides its status: what is left, 0, where
// the answers tell it.
func denyArgs(extra string) string {
	if extra == "" {
		return ""
	}
	return "hdr X-Rate-Limit-Remaining 0 "
}

// startHAProxy starts HAProxy with the further frontend rules extra ("":
// none, a bare 429).
func startHAProxy(extra string) (*Instance, error) {
	bin, err := HAProxyPath()
	if err != nil {
		return nil, err
	}
	ok := new(okHandler)
	backend := httptest.NewServer(ok)
	dir, err := os.MkdirTemp("", "realworld-haproxy-")
	if err != nil {
		backend.Close()
		return nil, err
	}
	// The port is free when we look; another process may take it before
	// haproxy binds it, so try a few.
	var inst *Instance
	for range 5 {
		if inst, err = tryHAProxy(bin, dir, backend.Listener.Addr().String(), extra); err == nil {
			break
		}
	}
	if err != nil {
		backend.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	inst.admitted = ok.n.Load
	stop := inst.close
	inst.close = func() error {
		err := stop()
		backend.Close()
		if rmErr := os.RemoveAll(dir); err == nil {
			err = rmErr
		}
		return err
	}
	return inst, nil
}

func tryHAProxy(bin, dir, backend, extra string) (*Instance, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(conf, fmt.Appendf(nil, haproxyConf, port, defWindow.Milliseconds(), extra, denyArgs(extra), defLimit, backend), 0o644); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	cmd := exec.Command(bin, "-db", "-f", conf)
	cmd.Stdout, cmd.Stderr = &out, &out
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	exited, err := launch(cmd, port, func() string { return out.String() })
	if err != nil {
		return nil, fmt.Errorf("haproxy %w", err)
	}
	inst := &Instance{URL: "http://" + addr + "/"}
	var closed bool
	var closeErr error
	inst.close = func() error {
		if closed {
			return closeErr
		}
		closed = true
		// haproxy ends on SIGTERM by the signal: its exit status says
		// nothing.
		if err := terminate(cmd, exited); err != nil && !isSignalled(err) {
			closeErr = err
		}
		return closeErr
	}
	return inst, nil
}

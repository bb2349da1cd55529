package realworld

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// NginxPath returns the nginx binary, or an error matching [ErrUnavailable].
func NginxPath() (string, error) { return binary("nginx", "nginx-light") }

// Nginx is nginx's limit_req, in the setup most guides give for an API:
//
//	limit_req_zone $binary_remote_addr zone=api:1m rate=10r/s;
//	limit_req_status 429;
//	location / { limit_req zone=api burst=5 nodelay; ... }
//
// A leaky bucket by client IP with millisecond resolution: a request is
// refused when it would take the bucket beyond 5 excess requests; nodelay
// answers the excess at once instead of spacing it out. A fresh bucket
// admits 6 at once (the first request leaves it empty). It sends no
// rate-limit headers and no Retry-After, only a bare 429 with an HTML body,
// and does not count refused requests.
//
// Each [Server.Start] runs its own nginx (master_process off, daemon off)
// from a temporary prefix on a free loopback port, and Close stops it
// (SIGTERM, then SIGKILL after 5 s). The admitted count comes from its access
// log, read after it stops.
func Nginx() Server {
	return Server{
		Name:      "nginx",
		Algorithm: "leaky bucket (limit_req burst=5 nodelay)",
		Quota:     Quota{Limit: 10, Window: time.Second, Burst: 6},
		start:     func() (*Instance, error) { return startNginx(" nodelay") },
	}
}

// NginxDelay is [Nginx] without nodelay, as nginx's own documentation
// gives limit_req:
//
//	location / { limit_req zone=api burst=5; ... }
//
// The excess is not answered at once but delayed, each request until the
// leaky bucket has drained to it (100 ms apart at 10 r/s); a request that
// would take the bucket beyond 5 excess requests is refused at once with a
// bare 429. So a client that sends too fast sees its answers slow down
// before it sees any 429.
func NginxDelay() Server {
	return Server{
		Name:      "nginx-delay",
		Algorithm: "leaky bucket (limit_req burst=5, excess delayed)",
		Quota:     Quota{Limit: 10, Window: time.Second, Burst: 6},
		start:     func() (*Instance, error) { return startNginx("") },
	}
}

// nginxPrelude is what every configuration here starts with: one process
// in the foreground, its pid and logs in the prefix, and an access log of
// statuses alone, which Admitted counts. The http block stays open.
const nginxPrelude = `daemon off;
master_process off;
worker_processes 1;
pid nginx.pid;
error_log error.log warn;
events { worker_connections 1024; }
http {
	default_type text/plain;
	log_format status '$status';
	access_log access.log status;
	keepalive_requests 1000000;
`

const nginxConf = nginxPrelude + `	limit_req_zone $binary_remote_addr zone=api:1m rate=10r/s;
	limit_req_status 429;
	server {
		listen 127.0.0.1:%d;
		root html;
		location / {
			limit_req zone=api burst=5%s;
			# try_files runs after limit_req (a "return" would run before it).
			try_files /ok.txt =404;
		}
	}
}
`

// startNginx runs nginx's limit_req with the given options after burst=5.
func startNginx(options string) (*Instance, error) {
	return startNginxConf(func(port int) []byte { return fmt.Appendf(nil, nginxConf, port, options) })
}

// startNginxConf runs nginx with the configuration conf returns for the
// port it is to listen on.
func startNginxConf(conf func(port int) []byte) (*Instance, error) {
	return startNginxOn(freePort, conf)
}

// startNginxOn is startNginxConf on the ports port hands out.
func startNginxOn(port func() (int, error), conf func(port int) []byte) (*Instance, error) {
	bin, err := NginxPath()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "realworld-nginx-")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "html"), 0o755); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "html", "ok.txt"), []byte("ok\n"), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// The port is free when we look; another process may take it before
	// nginx binds it, so try a few.
	var last error
	for range 5 {
		p, err := port()
		if err != nil {
			last = err
			continue
		}
		inst, err := tryNginx(bin, dir, p, conf)
		if err == nil {
			return inst, nil
		}
		last = err
	}
	os.RemoveAll(dir)
	return nil, last
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tryNginx runs nginx in dir listening on port, with the configuration
// config returns for it.
func tryNginx(bin, dir string, port int, config func(port int) []byte) (*Instance, error) {
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, config(port), 0o644); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	// -e: the error log before the configuration is read, which would
	// otherwise be /var/log/nginx/error.log.
	cmd := exec.Command(bin, "-p", dir+"/", "-c", conf, "-e", filepath.Join(dir, "error.log"))
	cmd.Stdout, cmd.Stderr = &out, &out
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	exited, err := launch(cmd, port, func() string {
		log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
		return out.String() + string(log)
	})
	if err != nil {
		return nil, fmt.Errorf("nginx %w", err)
	}

	admitted := int64(-1)
	inst := &Instance{URL: "http://" + addr + "/", admitted: func() int64 { return admitted }}
	var closed bool
	var closeErr error
	inst.close = func() error {
		if closed {
			return closeErr
		}
		closed = true
		_ = terminate(cmd, exited)
		admitted, closeErr = countStatus(filepath.Join(dir, "access.log"), "200")
		if err := os.RemoveAll(dir); closeErr == nil {
			closeErr = err
		}
		return closeErr
	}
	return inst, nil
}

// nginxConnConf is nginx's limit_conn in front of a backend (proxy_pass):
// at most %d requests of one client address in flight, any more refused at
// once with 429.
const nginxConnConf = nginxPrelude + `	limit_conn_zone $binary_remote_addr zone=conn:1m;
	limit_conn_status 429;
	server {
		listen 127.0.0.1:%d;
		location / {
			limit_conn conn %d;
			proxy_pass %s;
		}
	}
}
`

// StartNginxLimitConn runs nginx's limit_conn, the concurrency limit most
// guides give, in front of a backend that answers 200 after latency: at
// most conns requests of one client address in flight, any more refused at
// once with a bare 429 (no headers, no Retry-After). Its Admitted counts
// the 200s of its access log, known after Close; it fails with an error
// matching [ErrUnavailable] where nginx is not installed.
func StartNginxLimitConn(conns int, latency time.Duration) (*Instance, error) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(latency):
		case <-r.Context().Done():
		}
		_, _ = w.Write([]byte("ok\n"))
	}))
	inst, err := startNginxConf(func(port int) []byte {
		return fmt.Appendf(nil, nginxConnConf, port, conns, backend.URL)
	})
	if err != nil {
		backend.Close()
		return nil, err
	}
	stop := inst.close
	inst.close = func() error {
		err := stop()
		backend.Close()
		return err
	}
	return inst, nil
}

// countStatus counts the lines of an access log (format: $status) that are
// status.
func countStatus(path, status string) (int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return -1, err
	}
	defer f.Close()
	var n int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == status {
			n++
		}
	}
	return n, sc.Err()
}

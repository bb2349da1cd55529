package realworld

import "fmt"

// StartExpress starts node/express.js with any header draft and quota, for tests
// that need a window longer than they take.
var StartExpress = startExpress

// StartNode starts any script of node/ with a quota, for tests that need a
// window longer than they take.
var StartNode = startNode

// StartFlask starts python/flask_app.py with a quota and flags.
var StartFlask = startFlask

// StartDRF starts python/drf_app.py with a quota.
var StartDRF = startDRF

// CheckListener and ErrPortTaken are checkListener and errPortTaken.
var (
	CheckListener = checkListener
	ErrPortTaken  = errPortTaken
)

// StartNginxOn runs nginx's limit_req on port, as if freePort had handed
// it that port each time.
func StartNginxOn(port int) (*Instance, error) {
	return startNginxOn(func() (int, error) { return port, nil },
		func(port int) []byte { return fmt.Appendf(nil, nginxConf, port, "") })
}

package realworld

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

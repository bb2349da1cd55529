package realworld

// StartExpress starts server.js with any header draft and quota, for tests
// that need a window longer than they take.
var StartExpress = startExpress

// Package throttle keeps a client inside a server's rate limit.
package throttle

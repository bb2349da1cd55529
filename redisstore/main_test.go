package redisstore_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a test leaves a goroutine behind: every test
// closes its go-redis clients, and redistest reaps its servers, so none of
// them needs an exception.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

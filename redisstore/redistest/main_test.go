package redistest

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that stopped servers leave no reaper goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

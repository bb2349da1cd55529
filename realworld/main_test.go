package realworld_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Fiber (FiberFixed, FiberSliding) starts goroutines that live as long as
// the process: a clock that ticks once a second, its memory storage's
// sweeper, and fasthttp's Date updater and worker-pool cleaner.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/gofiber/fiber/v2/utils.StartTimeStampUpdater.func1.1"),
		goleak.IgnoreTopFunction("github.com/gofiber/fiber/v2/internal/memory.(*Storage).gc"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
	)
}

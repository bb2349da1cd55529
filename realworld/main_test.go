package realworld_test

import (
	"testing"

	"github.com/gofiber/fiber/v2/utils"
	"go.uber.org/goleak"
)

// Fiber (FiberFixed, FiberSliding) starts goroutines that live as long as
// the process: a clock that ticks once a second, its memory storage's
// sweeper, and fasthttp's Date updater and worker-pool cleaner. The clock is
// started here, once (it is a sync.Once), so that IgnoreCurrent names it
// whichever function the compiler inlined it into. gin-rate-limit's memory
// store (Gin) sweeps itself once a minute, for good.
func TestMain(m *testing.M) {
	utils.StartTimeStampUpdater()
	goleak.VerifyTestMain(m,
		goleak.IgnoreCurrent(),
		goleak.IgnoreTopFunction("github.com/gofiber/fiber/v2/internal/memory.(*Storage).gc"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
		goleak.IgnoreAnyFunction("github.com/JGLTechnologies/gin-rate-limit.clearInBackground"),
	)
}

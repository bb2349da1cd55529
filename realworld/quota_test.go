package realworld

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SetQuota takes a limit of at least 1 per whole seconds, and the servers
// built after it state that quota; a bad one is refused and changes nothing.
func TestSetQuota(t *testing.T) {
	t.Cleanup(func() { defLimit, defWindow = 30, 3*time.Second })
	for _, bad := range []struct {
		limit  int
		window time.Duration
	}{{0, time.Second}, {-1, time.Second}, {5, 0}, {5, 500 * time.Millisecond}, {5, 1500 * time.Millisecond}} {
		assert.Error(t, SetQuota(bad.limit, bad.window), "%d per %v", bad.limit, bad.window)
		assert.Equal(t, 30, defLimit)
		assert.Equal(t, 3*time.Second, defWindow)
	}

	require.NoError(t, SetQuota(10, 2*time.Second))
	srvs, err := ServersNamed("ulule", "tollbooth", "nginx")
	require.NoError(t, err)
	assert.Equal(t, Quota{Limit: 10, Window: 2 * time.Second}, srvs[0].Quota)
	assert.Equal(t, Quota{Limit: 10, Window: 2 * time.Second, Burst: 5}, srvs[1].Quota, "tollbooth holds a second of its rate")
	assert.Equal(t, 10.0, float64(srvs[2].Quota.Rate()), "nginx keeps its own")
}

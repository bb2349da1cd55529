package redisstore

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestScriptsUseRedisTime pins the design choice that makes clock skew
// between processes harmless: the scripts read the time from Redis
// (TestArgsCarryNoTime checks that no argument carries a client's time), and
// they touch only KEYS[1], so that they run on a cluster.
func TestScriptsUseRedisTime(t *testing.T) {
	for name, src := range map[string]string{"take": takeSrc, "correct": correctSrc} {
		assert.Contains(t, src, "redis.call('TIME')", "%s script", name)
		assert.Equal(t, strings.Count(src, "KEYS["), strings.Count(src, "KEYS[1]"), "%s script uses a key other than KEYS[1]", name)
	}
}

package sfv

import "testing"

// BenchmarkList parses the two fields of a typical IETF RateLimit response.
func BenchmarkList(b *testing.B) {
	policy := []string{`"burst";q=100;w=60, "daily";q=1000;w=86400`}
	rateLimit := []string{`"burst";r=50;t=30, "daily";r=900;t=40000`}
	var buf [4]Item
	b.ReportAllocs()
	for b.Loop() {
		List(policy, keepXYW, buf[:0], 32)
		List(rateLimit, keepXYW, buf[2:2], 32)
	}
}

package throttle

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// decimalSyntax is what parseDecimal accepts.
var decimalSyntax = regexp.MustCompile(`^[0-9]{1,18}(\.[0-9]+)?$`)

// FuzzValues checks the value readers against the standard library and
// their documented syntax: parseDecimal, parseGoDuration and parseHTTPDate.
// It is seeded with every value of the header tables.
func FuzzValues(f *testing.F) {
	for _, table := range [][]headerTest{githubTests(), hostileTests(), retryAfterTests(), vendorTests(), ietfTests(), regressionTests()} {
		for _, tt := range table {
			for _, vs := range tt.h {
				for _, v := range vs {
					f.Add(v)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		if ip, ns, ok := parseDecimal(s); ok {
			if !decimalSyntax.MatchString(s) {
				t.Fatalf("parseDecimal(%q) = %d, %d, true; want false", s, ip, ns)
			}
			want, err := strconv.ParseFloat(s, 64)
			if got, _ := parseCount(s); err != nil || got-want > 1e-6*want+1e-9 || want-got > 1e-6*want+1e-9 {
				t.Fatalf("parseCount(%q) = %v, want %v (%v)", s, got, want, err)
			}
		} else if decimalSyntax.MatchString(s) && len(strings.Split(s, ".")[0]) <= 18 {
			t.Fatalf("parseDecimal(%q) = false, want true", s)
		}

		if d, ok := parseGoDuration(s, new(stdBudget)); ok {
			if d < 0 || strings.ContainsAny(s, "+-") {
				t.Fatalf("parseGoDuration(%q) = %v, true", s, d)
			}
			if !strings.Contains(s, "d") {
				if want, err := time.ParseDuration(s); err != nil || want != d {
					t.Fatalf("parseGoDuration(%q) = %v, want %v (%v)", s, d, want, err)
				}
			}
		}

		got, ok := parseHTTPDate(s, new(stdBudget))
		if want, err := http.ParseTime(s); err == nil && len(s) <= maxStdLen {
			if !ok || !got.Equal(want) {
				t.Fatalf("parseHTTPDate(%q) = %v, %v; net/http: %v", s, got, ok, want)
			}
		}
		if sec, ok := imfUnix(s); ok && s[23:25] != "60" {
			want, err := time.Parse(http.TimeFormat, s)
			if err != nil || want.Unix() != sec {
				t.Fatalf("imfUnix(%q) = %d; time.Parse: %v, %v", s, sec, want.Unix(), err)
			}
		}
		if sec, ok := zonedUnix(s); ok {
			layout := time.RFC1123Z
			if strings.HasSuffix(s, "UTC") {
				layout = time.RFC1123
			}
			want, err := time.Parse(layout, s)
			if s[23:25] != "60" && (err != nil || want.Unix() != sec) {
				t.Fatalf("zonedUnix(%q) = %d; time.Parse: %v, %v", s, sec, want.Unix(), err)
			}
		}
	})
}

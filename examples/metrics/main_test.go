package main

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestScrape runs a fixed load (3 tabs × 10 requests against a quota of 20
// per second), scrapes /metrics and checks the series: what it asserts
// does not depend on timing. The IETF headers name no scope, so that one
// bucket takes every request (with GitHub's, the requests admitted while
// the first answer names the scope core move to that scope's bucket and
// are counted by both).
func TestScrape(t *testing.T) {
	const tabs, requests, quota = 3, 10, 20
	o, err := parseFlags([]string{"-addr", "127.0.0.1:0", "-tabs", "3", "-requests", "10", "-rate", "20", "-window", "1s", "-latency", "5ms", "-dialect", "ietf"}, &bytes.Buffer{})
	require.NoError(t, err)
	a, err := start(context.Background(), o)
	require.NoError(t, err)
	defer func() { require.NoError(t, a.close()) }()
	a.wait()
	require.Zero(t, a.errs.Load(), "no request refused or failed")
	require.EqualValues(t, tabs*requests, a.ok.Load()+a.limit.Load(), "every request answered")

	resp, err := http.Get("http://" + a.addr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)

	u, _ := url.Parse(a.api.URL)
	key := u.Host // the Transport keys its buckets by host
	// value returns the value of the series of family name whose labels
	// include want, failing unless exactly one matches.
	value := func(name string, want map[string]string) float64 {
		t.Helper()
		f, ok := fams[name]
		require.True(t, ok, "no family %s in /metrics; have %v", name, familyNames(fams))
		var got []*dto.Metric
		for _, m := range f.GetMetric() {
			if hasLabels(m, want) {
				got = append(got, m)
			}
		}
		require.Len(t, got, 1, "%s%v", name, want)
		m := got[0]
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
		t.Fatalf("%s: unexpected type %v", name, f.GetType())
		return 0
	}
	k := map[string]string{"throttle_key": key}
	with := func(kv ...string) map[string]string {
		m := map[string]string{"throttle_key": key}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	assert.Equal(t, float64(tabs*requests), value("throttle_requests_total", with("throttle_outcome", "admitted")), "every request admitted once")
	assert.Zero(t, value("throttle_requests_total", with("throttle_outcome", "refused", "throttle_reason", "queue_full")))
	assert.Zero(t, value("throttle_requests_total", with("throttle_outcome", "canceled")))
	assert.Zero(t, value("throttle_queue_length", k), "nobody waits once the load is done")
	assert.Zero(t, value("throttle_inflight", k))
	assert.Equal(t, float64(quota), value("throttle_server_limit", k), "the server states its quota on every answer")
	remaining := value("throttle_server_remaining", k)
	assert.True(t, remaining >= 0 && remaining <= quota, "throttle_server_remaining = %v, want in [0, %d]", remaining, quota)
	assert.Positive(t, value("throttle_limit_per_second", k), "the rate learned from the server")

	// 30 requests cannot all go at once against a quota of 20 per second:
	// some waited, each counted once in the histogram.
	var waited uint64
	for _, m := range fams["throttle_wait_duration_seconds"].GetMetric() {
		if hasLabels(m, k) {
			assert.Equal(t, "admitted", label(m, "throttle_outcome"), "every wait ended admitted")
			waited += m.Histogram.GetSampleCount()
		}
	}
	assert.True(t, waited >= 1 && waited <= tabs*requests, "waits counted: %d, want 1 to %d", waited, tabs*requests)
	assert.Equal(t, waited, uint64(a.tr.Stats().Total.Waited), "the histogram counts what Stats counts")
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			n++
		}
	}
	return n == len(want)
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func familyNames(fams map[string]*dto.MetricFamily) string {
	var names []string
	for n := range fams {
		names = append(names, n)
	}
	return strings.Join(names, " ")
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-addr", "0.0.0.0:9464"},
		{"-addr", "nonsense"},
		{"-tabs", "0"},
		{"-rate", "0"},
		{"-requests", "-1"},
		{"-dialect", "klingon"},
		{"extra"},
	} {
		_, err := parseFlags(args, &bytes.Buffer{})
		assert.Error(t, err, "parseFlags(%q)", args)
	}
}

package otelthrottle_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/go-throttle/throttle"
	"github.com/go-throttle/throttle/otelthrottle"
	"github.com/go-throttle/throttle/throttletest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// A Transport wired to a MeterProvider; here its reader is a ManualReader,
// in production an exporter (Prometheus, OTLP).
func Example() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())

	api := throttletest.NewHandler(throttletest.Config{
		Quota:   throttletest.Quota{Limit: 100, Window: 10 * time.Second},
		Dialect: throttletest.IETF,
	})
	tr := &throttle.Transport{Base: api}
	tel, err := otelthrottle.Instrument(tr, mp)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tel.Close()

	client := &http.Client{Transport: tr}
	for range 3 {
		resp, err := client.Get("http://api.test/items")
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			if m.Name == "throttle.requests" {
				for _, p := range d.DataPoints {
					if out, _ := p.Attributes.Value(otelthrottle.OutcomeAttr); out.AsString() == "admitted" {
						fmt.Println(m.Name, "admitted:", p.Value)
					}
				}
			}
		case metricdata.Gauge[float64]:
			if m.Name == "throttle.server.limit" {
				fmt.Println(m.Name+":", d.DataPoints[0].Value)
			}
		}
	}
	// Output:
	// throttle.requests admitted: 3
	// throttle.server.limit: 100
}

package throttle

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTransportNewBucketStartsFull: the first request of a new key is
// admitted at once by a bucket of one token that never queues. The bucket is
// made after the lookup read the clock, and was once full only from its own
// later reading, so that the request found it empty. Real time: in a
// synctest bubble both readings are equal.
func TestTransportNewBucketStartsFull(t *testing.T) {
	tr := &Transport{
		Base:   roundTripFunc(func(r *http.Request) (*http.Response, error) { return newResponse(r, 200, nil, ""), nil }),
		Config: Config{Limit: 1, Burst: 1, MaxQueue: -1},
	}
	for i := range 20 {
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://host%d.test/", i), nil)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err, "the first request to host%d.test", i)
		resp.Body.Close()
	}
}

//go:build unix

package throttle

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPersistFileFIFO: a FIFO at the path used to block PersistFile in open
// for as long as nobody wrote to it. A path that is not a regular file is
// refused at once, and nothing replaces it.
func TestPersistFileFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bucket.json")
	require.NoError(t, syscall.Mkfifo(path, 0o600))
	type result struct {
		f   *StateFile
		err error
	}
	done := make(chan result, 1)
	go func() {
		f, err := PersistFile(NewBucket(Config{Limit: 1}), path, time.Second)
		done <- result{f, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(5 * time.Second):
		// Unblock the open, so that no goroutine is left behind.
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		require.NoError(t, err)
		w.Close()
		r = <-done
		if r.f != nil {
			r.f.Close()
		}
		t.Fatal("PersistFile blocked on a FIFO")
	}
	require.Error(t, r.err)
	assert.Nil(t, r.f, "no StateFile that would replace the FIFO")
	st, err := os.Lstat(path)
	require.NoError(t, err)
	assert.Equal(t, os.ModeNamedPipe, st.Mode().Type(), "the FIFO is left alone")
}

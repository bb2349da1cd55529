package throttle

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPersistFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "bucket.json")
		run := func(requests int) (admitted int) {
			b := NewBucket(Config{Limit: 1, Burst: 5})
			f, err := PersistFile(b, path, time.Second)
			require.NoError(t, err)
			defer func() { require.NoError(t, f.Close()) }()
			for range requests {
				if b.Allow() {
					admitted++
				}
			}
			return admitted
		}
		assert.Equal(t, 5, run(10), "first run: a fresh bucket, full")
		assert.Equal(t, 0, run(10), "second run at once: resumed empty, no burst")
		time.Sleep(2 * time.Second)
		assert.Equal(t, 2, run(10), "third run: refilled for the time that passed")
	})
}

func TestPersistFileDebouncesWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "bucket.json")
		b := NewBucket(Config{Limit: 100, Burst: 100})
		f, err := PersistFile(b, path, time.Second)
		require.NoError(t, err)
		defer f.Close()
		for range 50 {
			b.Allow()
		}
		_, err = os.Stat(path)
		require.ErrorIs(t, err, os.ErrNotExist, "no write per request")
		time.Sleep(time.Second)
		synctest.Wait()
		info, err := os.Stat(path)
		require.NoError(t, err, "written after the debounce interval")
		time.Sleep(5 * time.Second)
		synctest.Wait()
		again, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, info.ModTime(), again.ModTime(), "nothing changed: nothing written")
	})
}

func TestPersistFileCorrupt(t *testing.T) {
	for name, content := range map[string]string{
		"garbage":   "not json at all",
		"truncated": `{"version":1,"at":"2000-01-01T00:00:00Z","tok`,
		"bad value": `{"version":1,"at":"2000-01-01T00:00:00Z","tokens":1,"limit":-5,"burst":1}`,
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "bucket.json")
				require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
				b := NewBucket(Config{Limit: 1, Burst: 5})
				f, err := PersistFile(b, path, time.Second)
				require.ErrorIs(t, err, ErrBadState)
				require.NotNil(t, f, "the file is still usable")
				assert.InDelta(t, 0, b.Tokens(), 1e-9, "a bad file starts the bucket empty")
				require.NoError(t, f.Close())
				data, err := os.ReadFile(path)
				require.NoError(t, err)
				var s State
				require.NoError(t, json.Unmarshal(data, &s), "overwritten with a good state")
			})
		})
	}
}

func TestPersistFileUnreadableDir(t *testing.T) {
	b := NewBucket(Config{Limit: 1})
	dir := t.TempDir()
	path := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(path, 0o700)) // a directory where the file should be
	f, err := PersistFile(b, path, time.Second)
	require.Error(t, err)
	assert.Nil(t, f)
}

package throttle

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tempFiles returns the names in dir that look like a save's temporary
// file for path, in today's naming or the one before.
func tempFiles(t *testing.T, path string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		if n := e.Name(); n != filepath.Base(path) && strings.HasPrefix(n, filepath.Base(path)+".") && strings.Contains(n, "tmp") {
			names = append(names, n)
		}
	}
	return names
}

// TestPersistFileCleansStaleTemps: the temporary files of saves that died
// (SIGKILL between create and rename) are removed by the next PersistFile
// on that path; a live writer's, and files not the bucket's, are kept.
func TestPersistFileCleansStaleTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bucket.json")
	// A process that has exited: its pid names no writer.
	child := exec.Command(os.Args[0], "-test.run=^$")
	require.NoError(t, child.Run())
	dead := child.Process.Pid
	old := time.Now().Add(-time.Hour)
	files := map[string]bool{ // name: removed
		"bucket.json.tmp-" + strconv.Itoa(dead) + "-123":        true,  // its writer died
		"bucket.json.tmp-" + strconv.Itoa(os.Getpid()) + "-456": false, // this process's, fresh: may be mid-save
		"bucket.json.tmp-junk":                                  false, // fresh and of no writer known
		"bucket.json.tmp-aged":                                  true,  // older than any save takes
		"bucket.json.8812.tmp":                                  true,  // the naming before, aged
		"bucket.json.bak":                                       false, // the user's
		"other.json.tmp-1-1":                                    false, // another bucket's
	}
	for name, removed := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("{"), 0o600))
		if removed && !strings.Contains(name, strconv.Itoa(dead)) {
			require.NoError(t, os.Chtimes(p, old, old))
		}
	}
	f, err := PersistFile(NewBucket(Config{Limit: 1}), path, time.Second)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	for name, removed := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if removed {
			assert.ErrorIs(t, err, os.ErrNotExist, "%s: stale, should be removed", name)
		} else {
			assert.NoError(t, err, "%s: should be kept", name)
		}
	}
}

// TestPersistFileSurvivesKills is the probe's scenario: a process saving
// in a loop is killed (SIGKILL) again and again; the next PersistFile
// leaves no temporary file behind.
func TestPersistFileSurvivesKills(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	path := filepath.Join(t.TempDir(), "bucket.json")
	orphans := 0
	for kill := 0; kill < 60 && (kill < 20 || orphans == 0); kill++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPersistFileSaver$")
		cmd.Env = append(os.Environ(), "THROTTLE_SAVER_PATH="+path)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		_, err = bufio.NewReader(out).ReadString('\n') // saving
		require.NoError(t, err)
		time.Sleep(time.Duration(kill%5) * time.Millisecond)
		require.NoError(t, cmd.Process.Kill()) // SIGKILL
		_ = cmd.Wait()
		orphans = len(tempFiles(t, path))
	}
	t.Logf("%d temporary files left by the kills", orphans)
	f, err := PersistFile(NewBucket(Config{Limit: 1}), path, time.Second)
	if err != nil {
		require.ErrorIs(t, err, ErrBadState, "a killed save never leaves the file itself torn")
	}
	require.NoError(t, f.Close())
	assert.Empty(t, tempFiles(t, path), "stale temporary files left after PersistFile")
}

// TestPersistFileSaver is the process TestPersistFileSurvivesKills kills:
// it saves in a loop until killed.
func TestPersistFileSaver(t *testing.T) {
	path := os.Getenv("THROTTLE_SAVER_PATH")
	if path == "" {
		t.Skip("run by TestPersistFileSurvivesKills")
	}
	b := NewBucket(Config{Limit: 1})
	f, err := PersistFile(b, path, time.Hour)
	if err != nil && f == nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("saving\n")
	for {
		b.Allow()
		_ = f.Save()
	}
}

// TestPersistFileTooLarge: a state file is small; one beyond the bound is
// not read whole but refused, and the bucket starts empty.
func TestPersistFileTooLarge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "bucket.json")
		// Valid JSON, 2 MiB of it trailing spaces.
		data := `{"version":1,"at":"` + time.Now().Format(time.RFC3339Nano) + `","tokens":5,"limit":1,"burst":5}` + strings.Repeat(" ", 2<<20)
		require.NoError(t, os.WriteFile(path, []byte(data), 0o600))
		b := NewBucket(Config{Limit: 1, Burst: 5})
		f, err := PersistFile(b, path, time.Second)
		require.ErrorIs(t, err, ErrBadState)
		require.NotNil(t, f)
		assert.InDelta(t, 0, b.Tokens(), 1e-9, "refused: the bucket starts empty")
		require.NoError(t, f.Close())
		st, err := os.Stat(path)
		require.NoError(t, err)
		assert.Less(t, st.Size(), int64(4096), "overwritten by a state of normal size")
	})
}

package throttle

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A StateFile keeps a bucket's [State] in a file, so that a CLI run every
// minute, or a service restarted by its orchestrator, resumes its bucket
// instead of bursting a full one and forgets no cooldown. Create one with
// [PersistFile]; call Close when done.
type StateFile struct {
	path  string
	b     *Bucket
	every time.Duration

	mu     sync.Mutex
	timer  *time.Timer
	last   uint64 // the bucket's activity at the last save
	closed bool
}

// DefaultSaveEvery is how often a [StateFile] saves a bucket in use when
// PersistFile is given zero.
const DefaultSaveEvery = time.Second

// PersistFile restores b from the file at path and keeps saving it there:
// at most once every every (zero: [DefaultSaveEvery]) while the bucket is in
// use, and on Close. Writes are atomic: a temporary file in the same
// directory, "<path>.tmp-<pid>-<random>", renamed over the old one. The
// temporary files of saves that died before their rename (a process
// killed, a full disk) are removed here: those whose process is gone, and
// any older than a minute. No goroutine runs between saves; a timer wakes
// the saver.
//
// A missing file leaves b as it is, a fresh bucket. A file that cannot be
// read or parsed (corrupt, truncated, larger than a state file can be
// ([MaxStateFileSize]), from another program) is reported by an error
// matching [ErrBadState]; the bucket then starts empty rather than full,
// the conservative choice, and the returned StateFile is usable and will
// overwrite the file. Other errors (the directory cannot be read, the path
// is not a regular file: a directory, a FIFO, a device) return a nil
// StateFile, and the path is left alone.
func PersistFile(b *Bucket, path string, every time.Duration) (*StateFile, error) {
	if every <= 0 {
		every = DefaultSaveEvery
	}
	f := &StateFile{path: path, b: b, every: every}
	err := f.load()
	var pe *fs.PathError
	if errors.As(err, &pe) && !errors.Is(err, ErrBadState) {
		return nil, err
	}
	f.removeStale()
	f.mu.Lock()
	f.timer = time.AfterFunc(every, f.tick)
	f.mu.Unlock()
	return f, err
}

// MaxStateFileSize bounds what [PersistFile] reads: a state file is a few
// hundred bytes, and a larger one is not this package's.
const MaxStateFileSize = 1 << 20

// errNotRegular is the error of a state file path that names something
// other than a regular file.
var errNotRegular = errors.New("not a regular file")

func (f *StateFile) load() error {
	file, err := os.OpenFile(f.path, os.O_RDONLY|readFlags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer file.Close()
	if st, err := file.Stat(); err != nil {
		return err
	} else if !st.Mode().IsRegular() {
		return &fs.PathError{Op: "open", Path: f.path, Err: errNotRegular}
	}
	data, err := io.ReadAll(io.LimitReader(file, MaxStateFileSize+1))
	if err != nil {
		return err
	}
	if len(data) > MaxStateFileSize {
		f.empty()
		return fmt.Errorf("%w: %s: larger than %d bytes", ErrBadState, f.path, MaxStateFileSize)
	}
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		f.empty()
		return fmt.Errorf("%w: %s: %v", ErrBadState, f.path, err)
	}
	if err := f.b.Restore(s); err != nil {
		f.empty()
		return fmt.Errorf("%s: %w", f.path, err)
	}
	return nil
}

// staleTemp is the age beyond which a temporary file is stale whatever its
// name says: a save takes milliseconds.
const staleTemp = time.Minute

// tempPrefix is how the names of f's temporary files start.
func (f *StateFile) tempPrefix() string { return filepath.Base(f.path) + ".tmp-" }

// removeStale removes the temporary files that saves to f's path left
// behind: those of a process that is gone, and any older than staleTemp,
// including those named as before ("<path>.<digits>.tmp"). Failures are
// ignored: the files are only litter.
func (f *StateFile) removeStale() {
	dir := filepath.Dir(f.path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix, base := f.tempPrefix(), filepath.Base(f.path)+"."
	for _, e := range entries {
		name := e.Name()
		var pid string
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			pid, _, _ = strings.Cut(rest, "-")
		} else if rest, ok := strings.CutPrefix(name, base); !ok || !digits(strings.TrimSuffix(rest, ".tmp")) || !strings.HasSuffix(rest, ".tmp") {
			continue
		}
		if !e.Type().IsRegular() {
			continue
		}
		stale := false
		if n, err := strconv.Atoi(pid); err == nil && n != os.Getpid() && gone(n) {
			stale = true
		} else if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleTemp {
			stale = true
		}
		if stale {
			_ = os.Remove(filepath.Join(dir, name))
		}
	}
}

// digits reports whether s is a non-empty run of ASCII digits.
func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// empty starts the bucket with no tokens, for lack of a usable state.
func (f *StateFile) empty() {
	b := f.b
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.ownLocked()
	b.setTokensLocked(now, 0)
	b.releaseLocked(now)
}

// activity changes whenever the bucket admits or hears from the server.
func (b *Bucket) activity() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.count() + b.stats.corrections + b.stats.cooldowns + b.model.answers
}

func (f *StateFile) tick() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	if a := f.b.activity(); a != f.last {
		if f.saveLocked() == nil {
			f.last = a
		}
	}
	f.timer.Reset(f.every)
}

// Save writes the bucket's state now.
func (f *StateFile) Save() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.saveLocked()
}

func (f *StateFile) saveLocked() error {
	data, err := json.Marshal(f.b.Snapshot())
	if err != nil {
		return err
	}
	dir := filepath.Dir(f.path)
	tmp, err := os.CreateTemp(dir, f.tempPrefix()+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), f.path); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return nil
}

// Close stops the saving and writes the state a last time.
func (f *StateFile) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	f.timer.Stop()
	return f.saveLocked()
}

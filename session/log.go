package session

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"unicode/utf16"
)

// FormatVersion is the log format written in every header. Version 0 is
// "unstable": a log with another version is refused, never migrated.
const FormatVersion = 0

// headerType is the "type" of a log's first line.
const headerType = "session"

// Header is the first line of a session log:
// `{"type":"session","version":0,"id","createdAt","cwd"}`, with
// "additionalDirectories" when the session was created with some and
// "forkedFrom" for a fork. CreatedAt is Unix milliseconds; Cwd is the
// session's absolute working directory; AdditionalDirectories are the
// absolute workspace roots the session was created with (a Directories
// event changes them later); ForkedFrom is the id of the session a fork
// was copied from.
type Header struct {
	Type                  string   `json:"type"`
	Version               int      `json:"version"`
	ID                    string   `json:"id"`
	CreatedAt             int64    `json:"createdAt"`
	Cwd                   string   `json:"cwd,omitempty"`
	AdditionalDirectories []string `json:"additionalDirectories,omitempty"`
	ForkedFrom            string   `json:"forkedFrom,omitempty"`
}

// NewHeader returns the header of a new session created at createdAt
// (Unix ms).
func NewHeader(id, cwd string, createdAt int64) Header {
	return Header{Type: headerType, Version: FormatVersion, ID: id, CreatedAt: createdAt, Cwd: cwd}
}

// Permissions of the state directory's folders and files: owner only.
const (
	dirPerm  = 0o700
	filePerm = 0o600
)

// LogPath is where the log of session id with working directory cwd
// lives: root/cwd-<first 12 hex digits of sha256(cwd)>/<encoded id>.jsonl,
// or root/_no-cwd/... for an empty cwd (see encodeID).
func LogPath(root, cwd, id string) string {
	return filepath.Join(root, cwdDir(cwd), encodeID(id)+".jsonl")
}

// cwdDir is the folder of a cwd's sessions (one path segment).
func cwdDir(cwd string) string {
	if cwd == "" {
		return "_no-cwd"
	}
	sum := sha256.Sum256([]byte(cwd))
	return "cwd-" + hex.EncodeToString(sum[:6])
}

// encodeID makes a session id a file name: [A-Za-z0-9._-] are kept, every
// other UTF-16 code unit becomes ~XXXX (4 lowercase hex digits), and the
// names "." and ".." are escaped whole. Distinct ids give distinct names.
func encodeID(id string) string {
	plain := id != "" && id != "." && id != ".."
	for i := 0; plain && i < len(id); i++ {
		plain = keptByte(id[i])
	}
	if plain {
		return id
	}
	var b []byte
	for _, u := range utf16.Encode([]rune(id)) {
		if u < 0x80 && keptByte(byte(u)) && id != "." && id != ".." {
			b = append(b, byte(u))
			continue
		}
		b = append(b, '~')
		b = append(b, fmt.Sprintf("%04x", u)...)
	}
	return string(b)
}

func keptByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// Log appends one session's logged events to its JSONL file, one line per
// event, written through to the operating system as each event arrives
// (so a crash of the process loses nothing that was appended; Sync makes
// it durable). The file, with its header line, is created by Create or
// the first Append, in a folder created with mode 0700; the file has mode
// 0600. An appended Title is also written to the log's title file
// (TitlePath), which session/list reads.
// A Log is safe for concurrent use. After a write error every later
// Append fails with that error (Err returns it). While its file is open
// the Log holds the log's Lock, so no other process writes it; creating
// a file another process holds the lock of fails with a *LockedError.
type Log struct {
	mu     sync.Mutex
	path   string
	header Header
	f      *os.File // nil until the file is opened
	lock   *Lock    // held while f is open
	// created: Create wrote the file and closed it; size is how many
	// bytes this Log has written to it.
	created bool
	size    int64
	buf     bytes.Buffer
	enc     *json.Encoder
	err     error
	closed  bool
}

// NewLog returns the log of a new session at path; nothing is written
// until the first Append.
func NewLog(path string, h Header) *Log {
	l := &Log{path: path, header: h}
	l.enc = json.NewEncoder(&l.buf)
	l.enc.SetEscapeHTML(false)
	return l
}

// appendLog returns a Log that appends to the existing file f, holding
// lock.
func appendLog(path string, h Header, f *os.File, lock *Lock) *Log {
	l := NewLog(path, h)
	l.f, l.lock = f, lock
	return l
}

// Path is the log's file path.
func (l *Log) Path() string { return l.path }

// Header is the log's header.
func (l *Log) Header() Header { return l.header }

// ErrClosed is returned by Append on a closed Log.
var ErrClosed = errors.New("session: log is closed")

// Append writes ev as one line `{"type","seq","time","data"}\n`. The first
// Append creates the file and writes the header line with it. Errors are
// sticky and wrap the file system's.
func (l *Log) Append(ev Event) error {
	return l.AppendAll([]Event{ev})
}

// AppendAll writes evs, in order, with one write: as many Appends would,
// except that an event that cannot be encoded fails the call before
// anything is written (the log stays usable).
func (l *Log) AppendAll(evs []Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	if l.closed {
		return ErrClosed
	}
	l.buf.Reset()
	if l.f == nil && !l.created {
		if err := l.enc.Encode(l.header); err != nil {
			l.err = fmt.Errorf("session: encoding the log header: %w", err)
			return l.err
		}
	}
	for _, ev := range evs {
		if err := l.encodeEvent(ev); err != nil {
			return err // an unencodable event is skipped, the log stays usable
		}
	}
	if l.f == nil {
		if l.err = l.open(); l.err != nil {
			return l.err
		}
	}
	// The title file first (title.go): whoever reads the Title's line
	// then finds the file too. It is a copy for session/list; failing
	// to write it loses nothing (the list falls back to the log's head).
	for i := len(evs) - 1; i >= 0; i-- {
		if t, ok := evs[i].Data.(Title); ok {
			_ = WriteTitleFile(l.path, t)
			break
		}
	}
	n, err := l.f.Write(l.buf.Bytes())
	l.size += int64(n)
	if err != nil {
		l.err = fmt.Errorf("session: writing the log %s: %w", l.path, err)
		return l.err
	}
	return nil
}

// Create writes the log's file with its header line now, so that the
// session is listed, and can be loaded by another process, from the
// moment it exists (a client may create a session
// in one process and prompts it from another), and closes it again, so
// this process holds nothing for a session it may never use; the first
// Append (or Claim) reopens it and takes the log's Lock. Create itself
// takes no lock: it makes a file that did not exist (O_EXCL) for an id
// nobody else knows yet, and a lock held and let go at once could stay
// held by a command this process is starting meanwhile (a forked child
// keeps a copy of the lock's descriptor until it execs). Like an
// Append, the header is written through to the operating system, not
// synced (other processes see it at once; the fsync it had cost every
// session/new 0.4-5.8 ms, median 0.8, on an ext4 virtual disk, for a
// session that holds nothing yet): the first Sync makes it durable with
// what follows. Once the file exists (Create or Append ran), Create does
// nothing. Errors are sticky, as Append's.
func (l *Log) Create() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil || l.closed || l.f != nil || l.created {
		return l.err
	}
	l.buf.Reset()
	if err := l.enc.Encode(l.header); err != nil {
		l.err = fmt.Errorf("session: encoding the log header: %w", err)
		return l.err
	}
	f, err := l.createFile()
	if err != nil {
		l.err = err
		return l.err
	}
	n, err := f.Write(l.buf.Bytes())
	l.size += int64(n)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	l.created = true
	if err != nil {
		l.err = fmt.Errorf("session: writing the log %s: %w", l.path, err)
	}
	return l.err
}

// createFile creates the log's file, which must not exist, for
// appending, in a folder made if needed.
func (l *Log) createFile() (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(l.path), dirPerm); err != nil {
		return nil, fmt.Errorf("session: creating the log folder: %w", err)
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, filePerm)
	if err != nil {
		return nil, fmt.Errorf("session: creating the log: %w", err)
	}
	return f, nil
}

// ErrContinued says another process appended to a log this one created
// (Create) and had not reopened yet: the session goes on there.
var ErrContinued = errors.New("another process continued this session since it was created here")

// Claim makes the Log ready to append: after Create it reopens the file
// and takes the log's Lock again (nothing to do while the file is open,
// or before it exists). Call it before a turn, so that a session another
// process took over meanwhile is refused before anything runs. Errors: a
// *LockedError (wrapped) while another process holds the log (not
// sticky: a later Claim may succeed once it lets go); ErrContinued
// (wrapped) when another process appended to it since Create, and any
// other failure, sticky as Append's; the sticky error, if any.
func (l *Log) Claim() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil || l.closed || l.f != nil || !l.created {
		return l.err
	}
	err := l.open()
	var le *LockedError
	if !errors.As(err, &le) {
		l.err = err
	}
	return err
}

// open opens the file for appending (l.f), holding the log's Lock
// (l.lock): a new file (O_EXCL, in a folder made if needed), or, after
// Create, the file it wrote, which must still hold exactly what this Log
// wrote (another process that loaded the session meanwhile and appended
// to it owns it now). Errors: *LockedError (wrapped) when another process
// holds the lock, the file system's otherwise. The caller holds l.mu and
// writes l.buf, which holds the header line for a new file.
func (l *Log) open() error {
	if !l.created {
		if err := os.MkdirAll(filepath.Dir(l.path), dirPerm); err != nil {
			return fmt.Errorf("session: creating the log folder: %w", err)
		}
	}
	lock, err := Acquire(l.path)
	if err != nil {
		return fmt.Errorf("session: opening the log: %w", err)
	}
	var f *os.File
	if l.created {
		f, err = os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			err = fmt.Errorf("session: reopening the log: %w", err)
		} else if st, serr := f.Stat(); serr != nil || st.Size() != l.size {
			f.Close()
			err = fmt.Errorf("session: the log %s: %w", l.path, ErrContinued)
		}
	} else {
		f, err = l.createFile()
	}
	if err != nil {
		_ = lock.Release()
		return err
	}
	l.f, l.lock = f, lock
	return nil
}

// encodeEvent appends ev's line to l.buf; on failure l.buf is left as it
// was before the call.
func (l *Log) encodeEvent(ev Event) error {
	if ev.Data == nil {
		return fmt.Errorf("session: event %d has no data", ev.Seq)
	}
	mark := l.buf.Len()
	l.buf.WriteString(`{"type":`)
	l.buf.WriteString(strconv.Quote(ev.Data.EventType()))
	l.buf.WriteString(`,"seq":`)
	l.buf.WriteString(strconv.FormatInt(ev.Seq, 10))
	l.buf.WriteString(`,"time":`)
	l.buf.WriteString(strconv.FormatInt(ev.Time, 10))
	l.buf.WriteString(`,"data":`)
	if err := l.enc.Encode(ev.Data); err != nil {
		l.buf.Truncate(mark)
		return fmt.Errorf("session: encoding %s: %w", ev.Data.EventType(), err)
	}
	l.buf.Truncate(l.buf.Len() - 1) // the encoder's newline
	l.buf.WriteString("}\n")
	return nil
}

// Sync commits what was appended to stable storage (fsync). It returns the
// sticky write error, if any; without a file yet it does nothing.
func (l *Log) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	if l.f == nil || l.closed {
		return nil
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("session: syncing the log %s: %w", l.path, err)
	}
	return nil
}

// Err returns the sticky write error, or nil.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Close syncs and closes the file and releases the log's lock; later
// Appends fail with ErrClosed. Closing twice is harmless.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if l.f == nil {
		return l.err
	}
	err := l.f.Sync()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	_ = l.lock.Release()
	l.lock = nil
	if err != nil {
		return fmt.Errorf("session: closing the log %s: %w", l.path, err)
	}
	return l.err
}

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/kubeproof/kubeproof/contract/testapp"
)

// DefaultTerminationLog is Kubernetes' default terminationMessagePath. The
// kubelet creates a new, empty file there for each start of a container
// (mode 0666, so that any user may write it) and copies what the container
// left in it into status.containerStatuses[].state.terminated.message (and,
// after a restart, lastState.terminated.message).
const DefaultTerminationLog = "/dev/termination-log"

// TermLogLimit is how much of the file the kubelet reads (its
// MaxContainerTerminationMessageLength; it keeps the last 4096 bytes). The
// log is never made longer: a line the kubelet would cut in half, or that
// would push the first lines out, is not written.
const TermLogLimit = 4096

// exitReserve is kept free for the last line, "exit N" (at most 9 bytes), so
// that a log filled by signals and notes still ends with how the process
// ended.
const exitReserve = 16

// errTermLogFull: the line would make the file longer than the kubelet reads.
var errTermLogFull = errors.New("termination log full")

// termLog appends lines to the termination log (its lines are made by
// contract/testapp's Line functions, which specs parse back). The main process, exec
// hooks (`kubeproof-testapp note`) and the /note endpoint may append to the
// same file at the same time; each line is one write(2) to a file opened
// with O_APPEND, so lines do not interleave, and the size check and the
// write hold an flock, so that two writers do not both take the last bytes.
type termLog struct {
	path string
	// create: make the file if it is missing. Only for a path named in
	// $TERMINATION_LOG: in a Pod the kubelet has made the default one, and
	// outside a Pod creating /dev/termination-log would litter the host's
	// /dev.
	create bool
	// stderr gets every line too (so that `kubectl logs` shows them), and
	// why a line could not be written.
	stderr io.Writer
}

// termLogFromEnv is $TERMINATION_LOG, else the Kubernetes default. A Pod
// that sets another terminationMessagePath sets TERMINATION_LOG to it.
func termLogFromEnv() *termLog {
	if p := os.Getenv("TERMINATION_LOG"); p != "" {
		return &termLog{path: p, create: true, stderr: os.Stderr}
	}
	return &termLog{path: DefaultTerminationLog, stderr: os.Stderr}
}

// record appends line, then echoes it to stderr: a line on stderr says the
// file has it (a test that reads one may SIGKILL the process at once). A
// log that cannot be written (a run outside a Pod, a full log) is reported
// on stderr and otherwise ignored: what the app was asked to do matters
// more than the record of it.
func (l *termLog) record(line string) {
	err := l.append(line)
	fmt.Fprintf(l.stderr, "%s: %s\n", AppName, line)
	if err != nil {
		fmt.Fprintf(l.stderr, "%s: line not recorded: %v\n", AppName, err)
	}
}

// append writes line (which must not hold a newline) and a newline in one
// write, unless the file would then be longer than the kubelet reads.
func (l *termLog) append(line string) error {
	flags := os.O_WRONLY | os.O_APPEND
	if l.create {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(l.path, flags, 0o666)
	if err != nil {
		return fmt.Errorf("open termination log: %w", err)
	}
	defer f.Close()
	// Without the lock (a file system that does not do flock) lines still
	// do not interleave; only the limit could be overrun by a few lines.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err == nil {
		defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing unlocks too
	}
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat termination log %s: %w", l.path, err)
	}
	data := line + "\n"
	limit := int64(TermLogLimit - exitReserve)
	if strings.HasPrefix(line, testapp.KindExit+" ") {
		limit = TermLogLimit
	}
	if fi.Size()+int64(len(data)) > limit {
		return fmt.Errorf("%s holds %d bytes, %q would pass %d: %w", l.path, fi.Size(), line, limit, errTermLogFull)
	}
	if _, err := f.WriteString(data); err != nil {
		return fmt.Errorf("append to termination log %s: %w", l.path, err)
	}
	return nil
}

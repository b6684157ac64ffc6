//go:build linux

package umlguest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// systemdBinary is systemd's PID 1 program on Debian.
const systemdBinary = "/lib/systemd/systemd"

// guestUnit is the service that runs the command when systemd is the
// guest's PID 1.
const guestUnit = "kubeproof-guest.service"

// recordParam, in the environment of this program, asks it to record the
// exit code of the command's service in the results directory it names:
// systemd runs it after the service stopped (ExecStopPost).
const recordParam = "KUBEPROOF_GUEST_RECORD"

// bootSystemd hands the set-up guest to systemd: it writes a service that
// runs the command and powers the guest off when the command ended, and
// executes systemd in place of this init with that service as the one
// unit to start (no default target: nothing else of the host's units
// starts). It returns only when systemd could not be executed.
func bootSystemd(spec Spec) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	env := append([]string{"PATH=" + guestPath, "HOME=/root"}, spec.Env...)
	var quoted []string
	for _, e := range env {
		quoted = append(quoted, strconv.Quote(e))
	}
	var cmd []string
	for _, a := range spec.Command {
		cmd = append(cmd, systemdQuote(a))
	}
	dir := spec.Dir
	if dir == "" {
		dir = "/"
	}
	unit := fmt.Sprintf(`[Unit]
Description=the command of kubeproof's user-mode-linux guest
DefaultDependencies=no
SuccessAction=poweroff-force
FailureAction=poweroff-force

[Service]
Type=exec
ExecStart=%s
ExecStopPost=%s
Environment=%s
Environment=%s
WorkingDirectory=%s
StandardOutput=tty
StandardError=tty
TTYPath=/dev/console
# The command removes what it made; systemd only stops what is left.
KillMode=mixed
TimeoutStopSec=60
`, strings.Join(cmd, " "), systemdQuote(self), strings.Join(quoted, " "),
		strconv.Quote(recordParam+"="+spec.Results), strings.ReplaceAll(dir, " ", `\x20`))
	if err := os.WriteFile(filepath.Join("/etc/systemd/system", guestUnit), []byte(unit), 0o644); err != nil {
		return fmt.Errorf("write the guest's service: %w", err)
	}
	// A unit systemd cannot start makes it fall back to a rescue shell
	// nobody can log in to: the guest powers off instead.
	for _, fallback := range []string{"rescue.target", "emergency.target"} {
		if err := os.Symlink("/lib/systemd/system/poweroff.target", filepath.Join("/etc/systemd/system", fallback)); err != nil {
			return fmt.Errorf("make %s power off: %w", fallback, err)
		}
	}
	fmt.Fprintf(os.Stdout, "guest: booting systemd (%s) to run %s\n", systemdBinary, guestUnit)
	unix.Sync()
	err = syscall.Exec(systemdBinary, []string{systemdBinary, "--unit=" + guestUnit, "--log-target=console", "--log-level=notice", "--show-status=false"}, os.Environ())
	return fmt.Errorf("execute systemd: %w", err)
}

// systemdQuote quotes a word for a unit file's command line.
func systemdQuote(s string) string {
	return strconv.Quote(strings.ReplaceAll(s, "%", "%%"))
}

// recordServiceExit writes the command's exit code, from the variables
// systemd gives ExecStopPost, to the results directory dir.
func recordServiceExit(dir string) error {
	code := SetupFailed
	status := os.Getenv("EXIT_STATUS")
	switch os.Getenv("EXIT_CODE") {
	case "exited":
		n, err := strconv.Atoi(status)
		if err != nil {
			return fmt.Errorf("EXIT_STATUS %q: %w", status, err)
		}
		code = n
	case "killed", "dumped":
		code = 128 + int(unix.SignalNum("SIG"+status))
	}
	if err := os.WriteFile(filepath.Join(dir, ExitCodeFile), []byte(strconv.Itoa(code)+"\n"), 0o644); err != nil {
		return err
	}
	unix.Sync()
	return nil
}

package observer

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// procScript reads a running process, and says X (not a failure) for one
// that has ended: a Pod being deleted ends its processes between the
// runtime's answer and the read.
func TestProcScript(t *testing.T) {
	if _, err := os.Stat("/proc/self/cgroup"); err != nil {
		t.Skip("no /proc here")
	}
	run := func(pid int) ([]byte, error) {
		return exec.Command("sh", "-c", procScript, "sh", strconv.Itoa(pid)).Output()
	}
	out, err := run(os.Getpid())
	if err != nil || gone(out) || !strings.Contains(string(out), "\nG ") {
		t.Fatalf("a running process: gone %t, err %v, output:\n%s", gone(out), err, out)
	}
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}
	out, err = run(ended.Process.Pid)
	if err != nil || !gone(out) {
		t.Fatalf("an ended process: gone %t, err %v, output:\n%s", gone(out), err, out)
	}
}

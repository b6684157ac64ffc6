package childproc

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"
)

// helperEnv makes the test binary the parent in TestChildDiesWithParent.
const helperEnv = "KUBEPROOF_CHILDPROC_HELPER"

// The helper starts a long-lived child with Attr, its stdout on the pipe
// the test handed over (fd 3), says so, and waits to be killed.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		cmd := exec.Command("sleep", "300")
		cmd.Stdout = os.NewFile(3, "pipe")
		cmd.SysProcAttr = Attr()
		if err := cmd.Start(); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("started\n")
		select {}
	}
	os.Exit(m.Run())
}

// A child started with Attr dies when its parent is killed outright
// (SIGKILL, no cleanup runs): the pipe the child holds reaches EOF once
// both are gone. Without the tie the child would keep it open for 300 s.
func TestChildDiesWithParent(t *testing.T) {
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep program")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(self, "-test.run=^$")
	parent.Env = append(os.Environ(), helperEnv+"=1")
	parent.ExtraFiles = []*os.File{w}
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "started\n" {
		_ = parent.Process.Kill()
		t.Fatalf("the parent did not start its child: %q %v", line, err)
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	if err := r.SetReadDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	n, err := r.Read(make([]byte, 1))
	switch {
	case errors.Is(err, io.EOF):
	case errors.Is(err, os.ErrDeadlineExceeded):
		t.Fatal("the child was still alive 20 s after its parent was killed")
	default:
		t.Fatalf("read from the child's pipe: %d bytes, %v", n, err)
	}
}

package bringup

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/internal/progress"
)

func TestRunRecordsAndStops(t *testing.T) {
	var out bytes.Buffer
	s := New(progress.New(&out))
	ran := []string{}
	step := func(name string, err error) Step {
		return Step{Name: name, Run: func(context.Context) error { ran = append(ran, name); return err }}
	}
	err := s.Run(context.Background(), step("one", nil), step("two", errors.New("boom")), step("three", nil))
	if err == nil || strings.Join(ran, ",") != "one,two" {
		t.Fatalf("ran %v, err %v", ran, err)
	}
	st := s.Status()
	if len(st) != 1 || st[0].Name != "one" {
		t.Errorf("recorded %+v", st)
	}
	if !strings.Contains(out.String(), "one") || !strings.Contains(out.String(), "two") {
		t.Errorf("progress:\n%s", out.String())
	}
}

package hostchange

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// updateHeld changes a file that keeps host values saved while any holder
// (a cluster) exists, under an exclusive lock: two clusters may come and go
// at once. change edits the decoded file and returns its holders; with none
// left, the file and its lock are removed. what names the values in errors.
func updateHeld[T any](file, what string, change func(*T) []string) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return fmt.Errorf("saved %s: %w", what, err)
	}
	lock, err := os.OpenFile(file+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("saved %s: %w", what, err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock saved %s: %w", what, err)
	}
	var saved T
	data, err := os.ReadFile(file)
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &saved); err != nil {
			return fmt.Errorf("parse saved %s %s: %w", what, file, err)
		}
	case !os.IsNotExist(err):
		return fmt.Errorf("read saved %s: %w", what, err)
	}
	if holders := change(&saved); len(holders) == 0 {
		_ = os.Remove(file + ".lock")
		if err := os.Remove(file); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("remove saved %s: %w", what, err)
		}
		return nil
	}
	out, err := json.MarshalIndent(saved, "", "  ")
	if err != nil {
		return fmt.Errorf("encode saved %s: %w", what, err)
	}
	if err := os.WriteFile(file, append(out, '\n'), 0o600); err != nil {
		return fmt.Errorf("save %s: %w", what, err)
	}
	return nil
}

package hostchange

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// holders is what every file of saved host values has: the clusters that
// hold the change. The first to come saves what the machine had; the last
// to leave puts it back.
type holders struct {
	Holders []string `json:"holders"`
}

func (h *holders) held() *holders { return h }

// heldValues is a file's content: holders and what was saved for them.
type heldValues[T any] interface {
	*T
	held() *holders
}

// hold adds holder to the file's holders. Before, when nobody held yet,
// first saves what the machine has; then each makes the change. An error
// of either leaves holder out.
func hold[T any, P heldValues[T]](file, what, holder string, first, each func(P) error) error {
	var changeErr error
	err := updateHeld(file, what, func(t *T) []string {
		saved := P(t)
		h := saved.held()
		if len(h.Holders) == 0 && first != nil {
			if changeErr = first(saved); changeErr != nil {
				return h.Holders
			}
		}
		if each != nil {
			if changeErr = each(saved); changeErr != nil {
				return h.Holders
			}
		}
		if !slices.Contains(h.Holders, holder) {
			h.Holders = append(h.Holders, holder)
		}
		return h.Holders
	})
	if err != nil {
		return err
	}
	return changeErr
}

// release removes holder from the file's holders and returns what was
// saved when it was the last one (last), for the caller to put back.
func release[T any, P heldValues[T]](file, what, holder string) (saved T, last bool, err error) {
	err = updateHeld(file, what, func(t *T) []string {
		h := P(t).held()
		had := len(h.Holders) > 0
		h.Holders = slices.DeleteFunc(h.Holders, func(x string) bool { return x == holder })
		last = had && len(h.Holders) == 0
		saved = *t
		return h.Holders
	})
	return saved, last, err
}

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

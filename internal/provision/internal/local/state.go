package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kubeproof/kubeproof/internal/provision/internal/hostchange"
	"github.com/kubeproof/kubeproof/internal/provision/internal/process"
)

// state is what `up` wrote down for `down`: the processes it started and the
// host settings it changed. It is saved after every change, so that `down`
// after a crash or Ctrl-C knows as much as `up` did.
type state struct {
	Name      string           `json:"name"`
	Config    Config           `json:"config"`
	CreatedAt time.Time        `json:"createdAt"`
	Processes []process.Record `json:"processes"`
	// Ready is set once `up` finished.
	Ready bool `json:"ready"`
	// HostPaths says which shared host directories existed before.
	HostPaths hostPaths `json:"hostPaths"`
	// Owner is the kubeproof process that made the cluster.
	Owner process.Record `json:"owner"`
	// Cgroup is how the node's cgroups were made (driver, cgroup v2
	// controllers).
	Cgroup hostchange.NodeCgroup `json:"cgroup"`
}

func loadState(path string) (*state, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s state
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("parse state file %s: %w", path, err)
	}
	return &s, nil
}

func (s *state) save(path string) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create state directory: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	return nil
}

func (s *state) process(name string) (process.Record, bool) {
	for _, p := range s.Processes {
		if p.Name == name {
			return p, true
		}
	}
	return process.Record{}, false
}

func isNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }

package controlplane

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/provision/internal/process"
)

// ExtraName returns a fresh name for an extra API server. It names the
// process, its log and its audit log; `down` finds the process by the
// cluster directory in its command line, not by this name.
func ExtraName() string {
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	return "kube-apiserver-extra-" + hex.EncodeToString(suffix)
}

// Extra is an extra API server a provider has prepared.
type Extra struct {
	Name string
	// Args is its whole command line, the binary first.
	Args []string
	// Wins are flags that replace those of the same name in Args (every
	// occurrence: a repeated list flag would otherwise add to the
	// cluster's value instead of replacing it).
	Wins []string
	// Log receives its output.
	Log string
	// Host and Port are where it serves.
	Host string
	Port int
	// Kubeconfig holds admin credentials (the server address is replaced).
	Kubeconfig string
	// CAFile verifies its serving certificate; AuditLog is its own log.
	CAFile, AuditLog string
	// Cleanup, if set, removes what the provider prepared for it, once it
	// has stopped.
	Cleanup func()
}

// StartExtra starts the server, waits until it is ready, and returns how to
// reach and stop it; a server that never becomes ready is stopped.
func StartExtra(ctx context.Context, e Extra) (*cluster.APIServer, error) {
	proc, err := process.Start(e.Name, Override(e.Args, e.Wins), e.Log, nil)
	if err != nil {
		return nil, err
	}
	stop := func() error {
		err := proc.Stop(15 * time.Second)
		if e.Cleanup != nil {
			e.Cleanup()
		}
		return err
	}
	url := "https://" + net.JoinHostPort(e.Host, strconv.Itoa(e.Port))
	if err := WaitReady(ctx, url, e.Kubeconfig, proc); err != nil {
		_ = stop()
		return nil, err
	}
	return &cluster.APIServer{URL: url, CAFile: e.CAFile, AuditLogPath: e.AuditLog, Stop: stop}, nil
}

// Override drops from args the flags named in wins, then appends wins.
func Override(args, wins []string) []string {
	named := map[string]bool{}
	for _, w := range wins {
		named[flagName(w)] = true
	}
	out := make([]string, 0, len(args)+len(wins))
	for _, a := range args {
		if !strings.HasPrefix(a, "--") || !named[flagName(a)] {
			out = append(out, a)
		}
	}
	return append(out, wins...)
}

// flagName is "--name" of "--name=value".
func flagName(arg string) string {
	name, _, _ := strings.Cut(arg, "=")
	return name
}

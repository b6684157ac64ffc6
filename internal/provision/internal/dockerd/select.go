package dockerd

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/kubeproof/kubeproof/internal/exitcode"
)

// Ping asks the Docker API at host (unix:// or tcp://) whether it is up.
func Ping(ctx context.Context, host string) error {
	client, base, err := httpClient(host)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/_ping", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("no Docker API at %s: %w", host, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the Docker API at %s answered %s: %s", host, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

func httpClient(host string) (*http.Client, string, error) {
	switch {
	case strings.HasPrefix(host, "unix://"):
		path := strings.TrimPrefix(host, "unix://")
		tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}}
		return &http.Client{Transport: tr}, "http://docker", nil
	case strings.HasPrefix(host, "tcp://"):
		return http.DefaultClient, "http://" + strings.TrimPrefix(host, "tcp://"), nil
	default:
		return nil, "", fmt.Errorf("unsupported Docker host %q (want unix:// or tcp://)", host)
	}
}

// DefaultSocket is where a Docker engine of the machine usually listens.
const DefaultSocket = "unix:///var/run/docker.sock"

// Select picks the Docker API to use: $DOCKER_HOST if set (it must answer),
// else our private daemon if it runs, else the machine's own engine at
// DefaultSocket if it answers. It returns "" when none answers.
func Select(ctx context.Context) (string, error) {
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		if err := Ping(ctx, h); err != nil {
			return "", exitcode.Errorf(exitcode.Unreachable, "DOCKER_HOST=%s: %v", h, err)
		}
		return h, nil
	}
	if Running(ctx) {
		return Host(), nil
	}
	if Ping(ctx, DefaultSocket) == nil {
		return DefaultSocket, nil
	}
	return "", nil
}

package provision

// Which Docker API kubeproof's commands use, and kubeproof's private Docker
// daemon (for the kind provider on machines without a Docker engine of
// their own), for the commands that ask for them by name.

import (
	"context"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision/internal/dockerd"
)

// PrivateDockerHost is the private daemon's socket, as DOCKER_HOST names it.
func PrivateDockerHost() string { return dockerd.Host() }

// StartPrivateDocker starts the private daemon (installing docker.io if
// missing); its images live under cacheDir.
func StartPrivateDocker(ctx context.Context, cacheDir string, pr *progress.Printer) error {
	return dockerd.Start(ctx, cacheDir, pr)
}

// StopPrivateDocker stops the private daemon, removes its containers and
// networks and undoes its changes to the machine.
func StopPrivateDocker(ctx context.Context, pr *progress.Printer) error { return dockerd.Stop(ctx, pr) }

// PrivateDockerRunning says whether the private daemon answers.
func PrivateDockerRunning(ctx context.Context) bool { return dockerd.Running(ctx) }

// DockerHost is the Docker API commands use ($DOCKER_HOST, else the private
// daemon if it runs, else the default socket); without one it says how to
// get one.
func DockerHost(ctx context.Context) (string, error) {
	host, err := dockerd.Select(ctx)
	if err != nil {
		return "", err
	}
	if host == "" {
		return "", exitcode.Errorf(exitcode.MissingTool,
			"no Docker API: $DOCKER_HOST is unset and nothing answers at %s; start Docker, or run `kubeproof dockerd start` for a private daemon", dockerd.DefaultSocket)
	}
	return host, nil
}

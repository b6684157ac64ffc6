package framework

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"k8s.io/client-go/rest"
)

// ComponentGet reads path from a control-plane component's secure endpoint
// (its /metrics or /configz) with the spec's credentials. The component's
// serving certificate is self-signed, so it is not verified: what is
// judged is the content, which only that component produces. It fails
// with a reason when the cluster names no endpoint for the component.
func (f *Framework) ComponentGet(ctx context.Context, component, path string) ([]byte, error) {
	base, ok := f.Cluster.Endpoints[component]
	if !ok {
		return nil, fmt.Errorf("the %s cluster names no endpoint of %s that this machine reaches", f.Cluster.Provider, component)
	}
	cfg := rest.CopyConfig(f.RESTConfig)
	cfg.Host = base
	cfg.Insecure = true
	cfg.CAFile, cfg.CAData = "", nil
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", component, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s of %s: %w", path, component, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s of %s: %w", path, component, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s of %s: HTTP %d: %.200s", path, component, resp.StatusCode, body)
	}
	return body, nil
}

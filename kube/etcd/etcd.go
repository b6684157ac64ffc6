// Package etcd reads the cluster's etcd directly, with the harness's own
// client certificate, to see what the API server really stored: under which
// key, in which encoding, with which revision.
package etcd

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubeproof/kubeproof/contract/childproc"
	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/kube/metrics"
)

// Client runs etcdctl against the cluster's etcd.
type Client struct {
	access cluster.EtcdClient
}

// New returns a client for the access the provider gave.
func New(access *cluster.EtcdClient) (*Client, error) {
	if access == nil || access.Etcdctl == "" || len(access.Endpoints) == 0 {
		return nil, fmt.Errorf("no etcd access")
	}
	return &Client{access: *access}, nil
}

// KeyValue is one stored key.
type KeyValue struct {
	Key            string
	Value          []byte
	CreateRevision int64
	ModRevision    int64
	Version        int64
}

// Encoding names how a stored value is encoded: "protobuf" (the
// Kubernetes protobuf envelope, "k8s\x00"), "json", or "other".
func (kv KeyValue) Encoding() string {
	switch {
	case bytes.HasPrefix(kv.Value, []byte("k8s\x00")):
		return "protobuf"
	case json.Valid(kv.Value):
		return "json"
	default:
		return "other"
	}
}

// GetLocal reads one key from the first member's own store (a serializable
// read), which answers without a majority of members: what that member has
// applied, that is, what it knows to be committed.
func (c *Client) GetLocal(ctx context.Context, key string) (found bool, err error) {
	first := *c
	first.access.Endpoints = c.access.Endpoints[:1]
	kvs, _, err := first.get(ctx, key, "--consistency=s")
	return len(kvs) > 0, err
}

// Get reads one key; found is false when it does not exist.
func (c *Client) Get(ctx context.Context, key string) (kv KeyValue, found bool, err error) {
	kvs, _, err := c.get(ctx, key)
	if err != nil || len(kvs) == 0 {
		return KeyValue{}, false, err
	}
	return kvs[0], true, nil
}

// DefaultPrefix is where the API server stores objects unless it is given
// another --etcd-prefix.
const DefaultPrefix = "/registry/"

// Find reads the object stored for a resource path such as
// "pods/NAMESPACE/NAME": at DefaultPrefix or, when it is not there, at the
// one key of etcd that ends in "/"+path (an API server with another
// --etcd-prefix keeps its objects there). kv.Key says where it was found,
// so that a claim about the key is judged on the key, and a claim about
// the object being in etcd on the object.
func (c *Client) Find(ctx context.Context, path string) (kv KeyValue, found bool, err error) {
	if kv, found, err = c.Get(ctx, DefaultPrefix+path); err != nil || found {
		return kv, found, err
	}
	keys, _, err := c.Keys(ctx, "")
	if err != nil {
		return KeyValue{}, false, err
	}
	key, err := keyFor(keys, path)
	if err != nil || key == "" {
		return KeyValue{}, false, err
	}
	return c.Get(ctx, key)
}

// keyFor is the one key that ends in "/"+path, "" when none does; more
// than one is an error, as kubeproof cannot tell which the API server's.
func keyFor(keys []string, path string) (string, error) {
	var match []string
	for _, k := range keys {
		if strings.HasSuffix(k, "/"+path) {
			match = append(match, k)
		}
	}
	switch len(match) {
	case 0:
		return "", nil
	case 1:
		return match[0], nil
	default:
		return "", fmt.Errorf("%d keys end in /%s: %v", len(match), path, match)
	}
}

// Prefix is the prefix the API server stores objects under (DefaultPrefix
// unless it runs with another --etcd-prefix), read from where it keeps
// namespace ns: for a spec that must read a key at one moment, with one
// request, and so works the prefix out beforehand.
func (c *Client) Prefix(ctx context.Context, ns string) (string, error) {
	path := "namespaces/" + ns
	kv, found, err := c.Find(ctx, path)
	if err != nil {
		return "", err
	}
	if !found {
		return "", fmt.Errorf("no key of etcd holds namespace %s", ns)
	}
	return strings.TrimSuffix(kv.Key, path), nil
}

// Keys lists the keys under prefix ("" for every key) and etcd's current
// revision.
func (c *Client) Keys(ctx context.Context, prefix string) ([]string, int64, error) {
	mode := []string{"--prefix", "--keys-only"}
	if prefix == "" {
		mode = []string{"--from-key", "--keys-only"} // from the empty key: all
	}
	kvs, rev, err := c.get(ctx, prefix, mode...)
	if err != nil {
		return nil, 0, err
	}
	keys := make([]string, len(kvs))
	for i, kv := range kvs {
		keys[i] = kv.Key
	}
	return keys, rev, nil
}

// flags are etcdctl's connection flags, followed by args.
func (c *Client) flags(args ...string) []string {
	return append([]string{
		"--endpoints=" + strings.Join(c.access.Endpoints, ","),
		"--cacert=" + c.access.CAFile, "--cert=" + c.access.Client.CertFile, "--key=" + c.access.Client.KeyFile,
	}, args...)
}

func (c *Client) get(ctx context.Context, key string, mode ...string) ([]KeyValue, int64, error) {
	args := c.flags(append([]string{"get", key, "-w", "json"}, mode...)...)
	cmd := exec.CommandContext(ctx, c.access.Etcdctl, args...)
	cmd.SysProcAttr = childproc.Attr() // dies with the spec process
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, 0, fmt.Errorf("etcdctl get %q: %w: %s", key, err, strings.TrimSpace(stderr.String()))
	}
	var resp struct {
		Header struct {
			Revision int64 `json:"revision"`
		} `json:"header"`
		KVs []struct {
			Key            []byte `json:"key"`
			Value          []byte `json:"value"`
			CreateRevision int64  `json:"create_revision"`
			ModRevision    int64  `json:"mod_revision"`
			Version        int64  `json:"version"`
		} `json:"kvs"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, 0, fmt.Errorf("etcdctl get %q: parse: %w", key, err)
	}
	kvs := make([]KeyValue, len(resp.KVs))
	for i, kv := range resp.KVs {
		kvs[i] = KeyValue{Key: string(kv.Key), Value: kv.Value, CreateRevision: kv.CreateRevision, ModRevision: kv.ModRevision, Version: kv.Version}
	}
	return kvs, resp.Header.Revision, nil
}

// Decode turns a protobuf-encoded value into its Kubernetes object.
func Decode(value []byte) (runtime.Object, error) {
	obj, _, err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Decode(value, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decode stored object: %w", err)
	}
	return obj, nil
}

// Compact compacts etcd's history up to revision: older revisions can no
// longer be read or watched.
func (c *Client) Compact(ctx context.Context, revision int64) error {
	out, err := exec.CommandContext(ctx, c.access.Etcdctl, c.flags("compact", fmt.Sprint(revision))...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("etcdctl compact %d: %w: %s", revision, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Metrics reads etcd's /metrics from its first client endpoint, with the
// client certificate (etcd serves them on its client port too).
func (c *Client) Metrics(ctx context.Context) (metrics.Samples, error) {
	cert, err := tls.LoadX509KeyPair(c.access.Client.CertFile, c.access.Client.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("etcd client certificate: %w", err)
	}
	ca, err := os.ReadFile(c.access.CAFile)
	if err != nil {
		return nil, fmt.Errorf("etcd CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("etcd CA %s holds no certificate", c.access.CAFile)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(c.access.Endpoints[0], "/")+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read etcd's metrics: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read etcd's metrics: HTTP %d %v", resp.StatusCode, err)
	}
	return metrics.Parse(body), nil
}

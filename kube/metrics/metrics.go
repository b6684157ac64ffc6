// Package metrics reads the Prometheus text a Kubernetes component serves
// on /metrics, for specs that count what a component did (its requests
// to etcd, etcd's Raft proposals) around one action of theirs.
package metrics

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/client-go/rest"
)

// Sample is one line of the exposition: a metric name, its labels and
// its value.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Samples is a scrape.
type Samples []Sample

// Parse reads the Prometheus text exposition format. Comments, and lines
// it cannot read, are skipped: a scrape is evidence about the metrics it
// names, not a validation of the format.
func Parse(text []byte) Samples {
	var out Samples
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if s, ok := parseLine(line); ok {
			out = append(out, s)
		}
	}
	return out
}

func parseLine(line string) (Sample, bool) {
	s := Sample{Labels: map[string]string{}}
	i := strings.IndexAny(line, "{ ")
	if i < 0 {
		return s, false
	}
	s.Name = line[:i]
	rest := line[i:]
	if strings.HasPrefix(rest, "{") {
		end := strings.LastIndex(rest, "}")
		if end < 0 {
			return s, false
		}
		if !parseLabels(rest[1:end], s.Labels) {
			return s, false
		}
		rest = rest[end+1:]
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return s, false
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, false
	}
	s.Value = v
	return s, true
}

// parseLabels reads name="value" pairs, with the format's escapes.
func parseLabels(text string, into map[string]string) bool {
	for text = strings.TrimSpace(text); text != ""; text = strings.TrimLeft(strings.TrimSpace(text), ",") {
		eq := strings.Index(text, "=")
		if eq < 0 || len(text) < eq+2 || text[eq+1] != '"' {
			return false
		}
		name := strings.TrimSpace(text[:eq])
		var val strings.Builder
		i := eq + 2
		for ; i < len(text) && text[i] != '"'; i++ {
			if text[i] == '\\' && i+1 < len(text) {
				i++
				switch text[i] {
				case 'n':
					val.WriteByte('\n')
				default:
					val.WriteByte(text[i])
				}
				continue
			}
			val.WriteByte(text[i])
		}
		if i >= len(text) {
			return false
		}
		into[name] = val.String()
		text = text[i+1:]
	}
	return true
}

// Sum adds the values of the samples named name whose labels include all
// of match.
func (ss Samples) Sum(name string, match map[string]string) float64 {
	var sum float64
	for _, s := range ss {
		if s.Name != name {
			continue
		}
		ok := true
		for k, v := range match {
			if s.Labels[k] != v {
				ok = false
				break
			}
		}
		if ok {
			sum += s.Value
		}
	}
	return sum
}

// Scrape reads /metrics through a REST client of the component (the API
// server's own client for the API server).
func Scrape(ctx context.Context, client rest.Interface) (Samples, error) {
	return scrape(ctx, client, "/metrics")
}

// Kubelet reads a node's kubelet /metrics through the API server's node
// proxy (nodes/proxy), which works wherever the API server reaches its
// kubelets: on clusters kubeproof did not make too.
func Kubelet(ctx context.Context, client rest.Interface, node string) (Samples, error) {
	return scrape(ctx, client, "/api/v1/nodes/"+node+"/proxy/metrics")
}

func scrape(ctx context.Context, client rest.Interface, path string) (Samples, error) {
	body, err := client.Get().AbsPath(path).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return Parse(body), nil
}

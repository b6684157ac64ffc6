package ociregistry

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// shaped serves next's answers at most bytesPerSecond: a slow link between
// the nodes and this registry, made by the server rather than the network,
// so that it costs no change to the machine's interfaces. The body is sent
// in chunks, each after the time the bytes before it take at that rate.
func shaped(next http.Handler, bytesPerSecond int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&paced{ResponseWriter: w, rate: bytesPerSecond, start: time.Now()}, r)
	})
}

// chunk is how much a paced writer sends at a time: small enough that a
// slow rate still sends evenly, large enough to cost little.
const chunk = 16 << 10

type paced struct {
	http.ResponseWriter
	rate  int64
	start time.Time
	sent  int64
}

func (p *paced) Write(b []byte) (int, error) {
	written := 0
	for len(b) > 0 {
		n := min(len(b), chunk)
		// The pace of the link: these bytes leave once the ones before
		// them have had their time at the rate.
		due := p.start.Add(time.Duration(float64(p.sent) / float64(p.rate) * float64(time.Second)))
		if wait := time.Until(due); wait > 0 {
			time.Sleep(wait)
		}
		m, err := p.ResponseWriter.Write(b[:n])
		written += m
		p.sent += int64(m)
		if err != nil {
			return written, err
		}
		b = b[n:]
	}
	return written, nil
}

// Unwrap lets http.ResponseController reach the connection.
func (p *paced) Unwrap() http.ResponseWriter { return p.ResponseWriter }

// ParseRate reads a rate in bytes per second: a number with an optional
// unit, k/K, M or G (powers of 1024), as "512k" or "4M"; "0" is none.
func ParseRate(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(s), "/s"), "B")
	mult := int64(1)
	if t != "" {
		switch t[len(t)-1] {
		case 'k', 'K':
			mult, t = 1<<10, t[:len(t)-1]
		case 'M':
			mult, t = 1<<20, t[:len(t)-1]
		case 'G':
			mult, t = 1<<30, t[:len(t)-1]
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("rate %q: want bytes per second, as 512k or 4M", s)
	}
	return int64(n * float64(mult)), nil
}

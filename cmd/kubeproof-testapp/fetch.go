package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/kubeproof/kubeproof/contract/testapp"
)

func fetch(args []string) error {
	fs := flag.NewFlagSet("fetch", flag.ContinueOnError)
	count := fs.Int("count", 1, "number of requests")
	timeout := fs.Duration("timeout", 2*time.Second, "timeout per request")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("fetch needs exactly one URL")
	}
	url := fs.Arg(0)
	// A new connection per request, so that a Service spreads them.
	client := &http.Client{Timeout: *timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	res := testapp.FetchResult{URL: url, Responses: map[string]int{}}
	for i := 0; i < *count; i++ {
		res.Requests++
		id, err := identify(client, url)
		if err != nil {
			res.Errors++
			res.LastError = err.Error()
			if errors.Is(err, errUnknownResponder) {
				res.Unknown++
			}
			continue
		}
		res.Last = &id
		res.Responses[responderName(id)]++
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

func identify(client *http.Client, url string) (testapp.Identity, error) {
	resp, err := client.Get(url)
	if err != nil {
		return testapp.Identity{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return testapp.Identity{}, err
	}
	var id testapp.Identity
	if err := json.Unmarshal(body, &id); err != nil || id.App != AppName {
		return testapp.Identity{}, fmt.Errorf("%w (HTTP %d): %.80q", errUnknownResponder, resp.StatusCode, body)
	}
	return id, nil
}

// errUnknownResponder: something answered that is not the test app.
var errUnknownResponder = errors.New("answer from an unknown responder")

// responderName is the responder's Pod name, or its host name outside a Pod.
func responderName(id testapp.Identity) string {
	if id.PodName != "" {
		return id.PodName
	}
	return id.Hostname
}

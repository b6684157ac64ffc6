package framework

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// Response is what the API server answered to a raw request: the status
// code and, for errors, the Status object it sent.
type Response struct {
	Code     int
	Proto    string
	Body     []byte
	Header   http.Header
	Status   metav1.Status
	Warnings []string
}

// Answer is a response as evidence: the status code and, for errors, the
// reason and message the API server gave.
type Answer struct {
	// Code is the HTTP status code.
	Code int `json:"code"`
	// Reason is the Status reason of an error answer (e.g. Invalid,
	// Forbidden).
	Reason string `json:"reason"`
	// Message is the Status message of an error answer.
	Message string `json:"message"`
	// Warnings are the Warning headers of the response.
	Warnings []string `json:"warnings,omitempty"`
}

// Answer renders the response for a claim.
func (r Response) Answer() Answer {
	return Answer{Code: r.Code, Reason: string(r.Status.Reason), Message: r.Status.Message, Warnings: r.Warnings}
}

// Request sends one raw HTTP request with cfg's credentials (and nothing
// else: no client-side validation or retries), so that a check sees exactly
// the status the API server chose.
func Request(ctx context.Context, cfg *rest.Config, method, path string, body any) (Response, error) {
	return RequestWithType(ctx, cfg, method, path, "application/json", body)
}

// RequestWithType is Request with a body of another content type (a merge
// patch, for instance).
func RequestWithType(ctx context.Context, cfg *rest.Config, method, path, contentType string, body any) (Response, error) {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return Response{}, fmt.Errorf("HTTP client: %w", err)
	}
	var reader io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		reader = bytes.NewReader(b)
	case string:
		reader = bytes.NewReader([]byte(b))
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return Response{}, fmt.Errorf("encode body: %w", err)
		}
		reader = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, cfg.Host+path, reader)
	if err != nil {
		return Response{}, err
	}
	req.Header.Set("Accept", "application/json")
	if reader != nil {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := client.Do(req)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: read body: %w", method, path, err)
	}
	r := Response{Code: resp.StatusCode, Proto: resp.Proto, Body: data, Header: resp.Header, Warnings: resp.Header.Values("Warning")}
	if resp.StatusCode >= 400 {
		_ = json.Unmarshal(data, &r.Status)
	}
	return r, nil
}

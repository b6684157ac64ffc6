package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"
)

// extras are what serve offers beside its HTTP endpoints, for the probes
// and sentences those cannot show: a gRPC health service (a grpc probe), a
// TCP port that closes each connection at once (a tcpSocket probe only
// connects), and a file that exists for a while (an exec probe that reads
// it, as `cat /tmp/healthy` does).
type extras struct {
	grpc     string
	tcpClose string
	touch    string
	touchFor time.Duration
}

func (x *extras) flags(fs *flag.FlagSet) {
	fs.StringVar(&x.grpc, "grpc", "", "also serve the gRPC health service (grpc.health.v1.Health/Check) on this address, over HTTP/2 without TLS")
	fs.StringVar(&x.tcpClose, "tcp-close", "", "also accept TCP connections on this address and close each at once")
	fs.StringVar(&x.touch, "touch", "", "write this file (\"ok\") at start")
	fs.DurationVar(&x.touchFor, "touch-for", 0, "remove the --touch file this long after start (0: never)")
}

// start starts them; errc receives an error that ends serve.
func (x *extras) start(st *state, errc chan<- error) error {
	if x.touch != "" {
		if err := os.WriteFile(x.touch, []byte("ok\n"), 0o644); err != nil {
			return fmt.Errorf("--touch: %w", err)
		}
		if x.touchFor > 0 {
			time.AfterFunc(x.touchFor, func() { _ = os.Remove(x.touch) })
		}
	}
	if x.tcpClose != "" {
		ln, err := net.Listen("tcp", x.tcpClose)
		if err != nil {
			return fmt.Errorf("--tcp-close: listen on %s: %w", x.tcpClose, err)
		}
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					errc <- fmt.Errorf("--tcp-close: %w", err)
					return
				}
				_ = c.Close()
			}
		}()
	}
	if x.grpc != "" {
		ln, err := net.Listen("tcp", x.grpc)
		if err != nil {
			return fmt.Errorf("--grpc: listen on %s: %w", x.grpc, err)
		}
		srv := &http.Server{Handler: grpcHealth(st), ReadHeaderTimeout: 10 * time.Second, Protocols: new(http.Protocols)}
		srv.Protocols.SetUnencryptedHTTP2(true)
		fmt.Fprintf(os.Stderr, "%s: gRPC health on %s\n", AppName, ln.Addr())
		go func() { errc <- fmt.Errorf("--grpc: %w", srv.Serve(ln)) }()
	}
	return nil
}

// gRPC health statuses (grpc.health.v1.HealthCheckResponse.ServingStatus).
const (
	healthServing    = 1
	healthNotServing = 2
)

// grpcHealth answers grpc.health.v1.Health/Check as a gRPC server does,
// without a gRPC library: one length-prefixed protobuf message each way,
// and the status in the trailers. It serves while /healthz would
// (healthy and started), and says NOT_SERVING otherwise; every other
// method is unimplemented (gRPC status 12).
func grpcHealth(st *state) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status, Grpc-Message")
		if r.Method != http.MethodPost || r.URL.Path != "/grpc.health.v1.Health/Check" {
			w.WriteHeader(http.StatusOK)
			w.Header().Set("Grpc-Status", "12")
			w.Header().Set("Grpc-Message", "unknown method "+r.URL.Path)
			return
		}
		if _, err := readGRPCMessage(r.Body); err != nil {
			w.WriteHeader(http.StatusOK)
			w.Header().Set("Grpc-Status", "13")
			w.Header().Set("Grpc-Message", err.Error())
			return
		}
		status := byte(healthServing)
		if _, healthy, started := st.get(); !healthy || !started {
			status = healthNotServing
		}
		// HealthCheckResponse{status: field 1, varint}.
		msg := []byte{0x08, status}
		frame := make([]byte, 5, 5+len(msg))
		binary.BigEndian.PutUint32(frame[1:], uint32(len(msg)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(append(frame, msg...))
		w.Header().Set("Grpc-Status", "0")
	})
}

// readGRPCMessage reads one length-prefixed gRPC message (uncompressed).
func readGRPCMessage(r io.Reader) ([]byte, error) {
	var head [5]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, fmt.Errorf("read the message's prefix: %w", err)
	}
	if head[0] != 0 {
		return nil, errors.New("a compressed message")
	}
	n := binary.BigEndian.Uint32(head[1:])
	if n > 1<<16 {
		return nil, fmt.Errorf("a message of %d bytes", n)
	}
	msg := make([]byte, n)
	_, err := io.ReadFull(r, msg)
	return msg, err
}

// redirect answers /redirect?to=URL&code=N with that redirect (302 by
// default): an httpGet probe follows one to the same host and counts one
// to another host as a success, with a warning.
func redirect(w http.ResponseWriter, r *http.Request) {
	to := r.URL.Query().Get("to")
	code := http.StatusFound
	if c := r.URL.Query().Get("code"); c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 300 || n > 399 {
			http.Error(w, "code: a 3xx status", http.StatusBadRequest)
			return
		}
		code = n
	}
	if to == "" {
		http.Error(w, "/redirect needs ?to=", http.StatusBadRequest)
		return
	}
	http.Redirect(w, r, to, code)
}

// catMode prints a file (exit 1 when it cannot be read): an exec probe's
// `cat /tmp/healthy` in an image without cat.
func catMode(args []string) error {
	if len(args) != 1 {
		return errors.New("cat needs one file")
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(data)
	return err
}

// writeMode writes TEXT into FILE; rmMode removes FILE.
func writeMode(args []string) error {
	if len(args) < 1 {
		return errors.New("write needs a file, then the text")
	}
	text := ""
	for i, a := range args[1:] {
		if i > 0 {
			text += " "
		}
		text += a
	}
	return os.WriteFile(args[0], []byte(text+"\n"), 0o644)
}

func rmMode(args []string) error {
	if len(args) != 1 {
		return errors.New("rm needs one file")
	}
	return os.Remove(args[0])
}

// Command kubeproof-webhook serves kubeproof's admission webhooks over
// HTTPS (see package webhooks). It runs in the cluster, in the image
// kubeproof.local/webhook, with its certificate and key mounted from a Secret.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kubeproof/kubeproof/webhooks"
)

func main() {
	listen := flag.String("listen", ":8443", "address to serve HTTPS on")
	cert := flag.String("tls-cert", "/tls/tls.crt", "serving certificate")
	key := flag.String("tls-key", "/tls/tls.key", "serving key")
	flag.StringVar(&webhooks.Image, "image", webhooks.Image, "image of the containers the mutating webhooks add")
	flag.Parse()

	srv := &http.Server{Addr: *listen, Handler: webhooks.NewServer().Handler(), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServeTLS(*cert, *key) }()
	fmt.Fprintf(os.Stderr, "kubeproof-webhook: serving on %s\n", *listen)
	select {
	case err := <-errc:
		fmt.Fprintln(os.Stderr, "kubeproof-webhook:", err)
		os.Exit(1)
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}
}

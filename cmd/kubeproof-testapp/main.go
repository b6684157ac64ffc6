// Command kubeproof-testapp is the one workload image kubeproof's suites run.
//
//	kubeproof-testapp [serve] [--listen :8080] [--ready] [--healthy] [--startup-delay D] [--on-term exit|ignore|delay=D]
//	                  [--grpc ADDR] [--tcp-close ADDR] [--touch FILE [--touch-for D]]
//	kubeproof-testapp exit [--code N] [--after D]
//	kubeproof-testapp note [--after D] TEXT...
//	kubeproof-testapp fetch [--count N] [--timeout D] URL
//	kubeproof-testapp cgroup
//	kubeproof-testapp proc
//	kubeproof-testapp cat FILE | write FILE TEXT... | rm FILE
//	kubeproof-testapp registry --listen ADDR [--user U --password P] [--stop-signal SIG]
//
// serve answers with its identity so that a check can tell which pod answered
// (a bare status code says only that some pod did), exposes health,
// readiness and startup endpoints that can be switched at runtime, and reports
// the cgroup limits it runs under. fetch is a client for pod-to-pod and
// Service checks: it tallies which pods answered. cgroup prints the limits;
// proc the process's namespaces, seccomp mode and hostname.
//
// serve, exit and note also write the termination log ($TERMINATION_LOG,
// else /dev/termination-log), which the kubelet copies into the Pod's
// status.containerStatuses[].state.terminated.message, so that a manifest
// alone (no code in the container) shows a Pod's life in its status:
//
//	start @1764201600123           serve started (unix ms)
//	note poststart @1764201600131  `note poststart` (an exec hook) or GET /note?text=poststart
//	signal SIGTERM +5012ms         a signal serve or exit received (ms since the process started)
//	exit 0                         how the process ended (none after a SIGKILL)
//
// --on-term says what serve does on SIGTERM or SIGINT: exit (shut down,
// exit 0), ignore (keep serving until the kubelet kills it after the grace
// period) or delay=D (keep serving D, then shut down). Other signals
// (SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2) are only recorded. exit waits D and
// exits with code N: init containers, crash loops. note appends one line,
// for lifecycle hooks; in the image the program is /kubeproof-testapp.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kubeproof/kubeproof/contract/testapp"
)

// AppName is in every identity answer; checks look for it.
const AppName = "kubeproof-testapp"

func main() {
	args := os.Args[1:]
	mode := "serve"
	if len(args) > 0 && !isFlag(args[0]) {
		mode, args = args[0], args[1:]
	}
	log := termLogFromEnv()
	var err error
	switch mode {
	case "serve":
		err = serve(args, log)
		finish(log, 0, err)
	case "exit":
		var code int
		code, err = exitMode(args, log)
		finish(log, code, err)
	case "note":
		err = noteMode(args, log)
	case "fetch":
		err = fetch(args)
	case "cgroup":
		err = json.NewEncoder(os.Stdout).Encode(readCgroupLimits())
	case "proc":
		err = json.NewEncoder(os.Stdout).Encode(readProc())
	case "cat":
		err = catMode(args)
	case "write":
		err = writeMode(args)
	case "rm":
		err = rmMode(args)
	case "registry":
		err = registryMode(args)
	default:
		err = fmt.Errorf("unknown mode %q (want serve, exit, note, fetch, cgroup, proc, cat, write, rm or registry)", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, AppName+":", err)
		os.Exit(1)
	}
}

// finish ends serve and exit: the error, if any, and the exit code go into
// the termination log, so that a Pod's status says why its container ended
// (a mistyped flag in a manifest, a port in use).
func finish(log *termLog, code int, err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, AppName+":", err)
		log.record(testapp.ErrorLine(truncate(err.Error(), 200)))
		code = 1
	}
	log.record(testapp.ExitLine(code))
	os.Exit(code)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func isFlag(s string) bool { return len(s) > 0 && s[0] == '-' }

// state is what the control endpoint switches.
type state struct {
	mu        sync.Mutex
	ready     bool
	healthy   bool
	started   bool
	startedAt time.Time
}

// newState starts with the given probe answers; /startupz fails until
// startupDelay has passed.
func newState(ready, healthy bool, startupDelay time.Duration) *state {
	st := &state{ready: ready, healthy: healthy, started: startupDelay <= 0, startedAt: time.Now()}
	if startupDelay > 0 {
		time.AfterFunc(startupDelay, func() {
			st.mu.Lock()
			st.started = true
			st.mu.Unlock()
		})
	}
	return st
}

func (s *state) get() (ready, healthy, started bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ready, s.healthy, s.started
}

func serve(args []string, log *termLog) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	listen := fs.String("listen", ":8080", "address to listen on")
	ready := fs.Bool("ready", true, "initial readiness (/readyz)")
	healthy := fs.Bool("healthy", true, "initial liveness (/healthz)")
	startupDelay := fs.Duration("startup-delay", 0, "how long /startupz fails after start")
	term := onTerm{kind: "exit"}
	fs.Var(&term, "on-term", "on SIGTERM or SIGINT: exit, ignore (until SIGKILL) or delay=D (serve D more, then exit)")
	var x extras
	x.flags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("serve takes no arguments, got %q", fs.Args())
	}
	// "start" first, so that each start of the container is in its log
	// (after a restart, the previous one is in lastState).
	log.record(testapp.StartLine(processStart))
	termc, stopSignals := watchSignals(log)
	defer stopSignals()

	st := newState(*ready, *healthy, *startupDelay)
	podIP := os.Getenv("POD_IP")
	if podIP == "" {
		podIP = firstIPv4()
	}
	mux := newHandler(st, podIP, log)

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *listen, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 4)
	if err := x.start(st, errc); err != nil {
		return err
	}
	go func() { errc <- srv.Serve(ln) }()
	// The address listened on, not the one asked for: with port 0 the
	// caller learns the port here.
	fmt.Fprintf(os.Stderr, "%s: serving on %s (pod IP %s)\n", AppName, ln.Addr(), podIP)
	select {
	case err := <-errc:
		return err
	case <-termc:
	}
	switch term.kind {
	case "ignore":
		// Until the kubelet's SIGKILL at the end of the grace period;
		// nothing is written after the signal line, which is the point.
		return <-errc
	case "delay":
		timer := time.NewTimer(term.delay)
		defer timer.Stop()
		select {
		case err := <-errc:
			return err
		case <-timer.C:
		}
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shut down: %w", err)
	}
	return nil
}

// newHandler serves the identity, probe, control and cgroup endpoints.
func newHandler(st *state, podIP string, log *termLog) http.Handler {
	hostname, _ := os.Hostname()
	identity := func(r *http.Request) testapp.Identity {
		rd, h, s := st.get()
		return testapp.Identity{
			App: AppName, Hostname: hostname, PodName: os.Getenv("POD_NAME"),
			PodNamespace: os.Getenv("POD_NAMESPACE"), PodIP: podIP,
			Ready: rd, Healthy: h, Started: s, StartedAt: st.startedAt, Path: r.URL.Path,
			Interfaces: interfaces(), PeerIndex: peerIndexes(),
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, identity(r))
	})
	probe := func(pick func(ready, healthy, started bool) bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			code := http.StatusOK
			if !pick(st.get()) {
				code = http.StatusServiceUnavailable
			}
			writeJSON(w, code, identity(r))
		}
	}
	// An app that has not started is not alive yet: /healthz fails until
	// /startupz passes, so a livenessProbe that ran during startup would
	// restart it (that is what startupProbe is for). /readyz does not wait:
	// a readinessProbe that ran during startup would make it Ready early.
	mux.HandleFunc("/healthz", probe(func(_, h, s bool) bool { return h && s }))
	mux.HandleFunc("/readyz", probe(func(r, _, _ bool) bool { return r }))
	mux.HandleFunc("/startupz", probe(func(_, _, s bool) bool { return s }))
	// /control?ready=false&healthy=true&started=true switches the probes.
	mux.HandleFunc("/control", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		st.mu.Lock()
		for key, field := range map[string]*bool{"ready": &st.ready, "healthy": &st.healthy, "started": &st.started} {
			if v := q.Get(key); v != "" {
				b, err := strconv.ParseBool(v)
				if err != nil {
					st.mu.Unlock()
					http.Error(w, fmt.Sprintf("%s: %v", key, err), http.StatusBadRequest)
					return
				}
				*field = b
			}
		}
		st.mu.Unlock()
		writeJSON(w, http.StatusOK, identity(r))
	})
	mux.HandleFunc("/redirect", redirect)
	mux.HandleFunc("/cgroup", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, readCgroupLimits())
	})
	// /note?text=prestop appends "note prestop @<unix ms>" to the
	// termination log: an httpGet lifecycle hook's trace. It answers 200
	// even when the line could not be written (stderr says why): a failed
	// postStart hook would have the kubelet kill the container, and the
	// missing line already shows the failure.
	mux.HandleFunc("/note", func(w http.ResponseWriter, r *http.Request) {
		text := testapp.OneLine(r.URL.Query().Get("text"))
		if text == "" {
			http.Error(w, "/note needs ?text=", http.StatusBadRequest)
			return
		}
		line := testapp.NoteLine(text, time.Now())
		log.record(line)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, line)
	})
	return mux
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func interfaces() map[string][]string {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	out := map[string][]string{}
	for _, i := range ifs {
		addrs, _ := i.Addrs()
		out[i.Name] = []string{}
		for _, a := range addrs {
			out[i.Name] = append(out[i.Name], a.String())
		}
	}
	return out
}

// peerIndexes reads each interface's iflink from sysfs (mounted in the
// container's own network namespace): for a veth, the index of its peer.
func peerIndexes() map[string]int {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	out := map[string]int{}
	for _, i := range ifs {
		raw, err := os.ReadFile("/sys/class/net/" + i.Name + "/iflink")
		if err != nil {
			continue
		}
		if link, err := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil && link != i.Index {
			out[i.Name] = link
		}
	}
	return out
}

func firstIPv4() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
			return ipn.IP.String()
		}
	}
	return ""
}

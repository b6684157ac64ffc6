// Command kubeproof-cni-trace is a CNI plugin that sets up nothing: placed
// first and last in a node's plugin chain, it writes down each call it
// gets (the command, the Pod it is for, when, and which process ran it)
// and passes the previous plugin's result on. The specs read its log to
// see who calls CNI and how long the chain between its two places took.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/kubeproof/kubeproof/contract/cnitrace"
)

func main() {
	if err := run(os.Stdin, os.Stdout, os.Getenv, os.Getppid()); err != nil {
		// The CNI error format: the runtime shows msg in the Pod's events.
		_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"cniVersion": "0.4.0", "code": 999, "msg": "kubeproof-cni-trace: " + err.Error()})
		os.Exit(1)
	}
}

// conf is the part of the plugin's network configuration it reads.
type conf struct {
	CNIVersion string          `json:"cniVersion"`
	Name       string          `json:"name"`
	Position   string          `json:"position"`
	Log        string          `json:"log"`
	PrevResult json.RawMessage `json:"prevResult,omitempty"`
}

func run(stdin io.Reader, stdout io.Writer, env func(string) string, ppid int) error {
	command := env("CNI_COMMAND")
	if command == "VERSION" {
		_, err := fmt.Fprint(stdout, `{"cniVersion":"0.4.0","supportedVersions":["0.3.0","0.3.1","0.4.0","1.0.0"]}`)
		return err
	}
	raw, err := io.ReadAll(stdin)
	if err != nil {
		return fmt.Errorf("read the network configuration: %w", err)
	}
	var c conf
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("parse the network configuration: %w", err)
	}
	call := cnitrace.Call{
		Command: command, Position: c.Position, ContainerID: env("CNI_CONTAINERID"), At: time.Now(),
		CallerPID: ppid, CallerComm: readTrim(fmt.Sprintf("/proc/%d/comm", ppid)),
	}
	call.CallerExe, _ = os.Readlink(fmt.Sprintf("/proc/%d/exe", ppid))
	call.Network, call.Netns, call.IfName = c.Name, env("CNI_NETNS"), env("CNI_IFNAME")
	call.Exe, _ = os.Executable()
	if len(c.PrevResult) > 0 {
		var prev struct {
			IPs []struct {
				Address string `json:"address"`
			} `json:"ips"`
		}
		if json.Unmarshal(c.PrevResult, &prev) == nil {
			for _, ip := range prev.IPs {
				call.IPs = append(call.IPs, ip.Address)
			}
		}
	}
	for _, kv := range strings.Split(env("CNI_ARGS"), ";") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "K8S_POD_NAMESPACE":
			call.PodNamespace = v
		case "K8S_POD_NAME":
			call.PodName = v
		}
	}
	if c.Log != "" {
		if err := appendLine(c.Log, call); err != nil {
			return err
		}
	}
	if command != "ADD" {
		return nil
	}
	// ADD prints a result: the previous plugin's, or (first in the chain)
	// an empty one of the configuration's version.
	if len(c.PrevResult) > 0 {
		_, err = stdout.Write(c.PrevResult)
		return err
	}
	return json.NewEncoder(stdout).Encode(map[string]any{"cniVersion": c.CNIVersion})
}

func appendLine(path string, call cnitrace.Call) error {
	line, err := json.Marshal(call)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open the trace log: %w", err)
	}
	defer f.Close()
	// One write of one line: concurrent calls append whole lines.
	if _, err := f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("write the trace log: %w", err)
	}
	return nil
}

func readTrim(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}

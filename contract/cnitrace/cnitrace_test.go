package cnitrace

import (
	"encoding/json"
	"testing"
	"time"
)

// A call is one JSON line as the plugin writes it and the specs read it
// back: the names the specs look for, the Pod's fields left out when the
// runtime gave none.
func TestCallLine(t *testing.T) {
	at := time.Date(2026, 11, 27, 10, 0, 0, 123456000, time.UTC)
	line, err := json.Marshal(Call{Command: "ADD", Position: "first", ContainerID: "abc", At: at, CallerPID: 42, CallerComm: "containerd"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"command":"ADD","position":"first","containerID":"abc","at":"2026-11-27T10:00:00.123456Z","callerPID":42,"callerComm":"containerd"}`
	if string(line) != want {
		t.Errorf("line %s, want %s", line, want)
	}
	var back Call
	if err := json.Unmarshal([]byte(`{"command":"DEL","position":"last","containerID":"c","podNamespace":"ns","podName":"p","at":"2026-11-27T10:00:01Z","callerPID":7,"callerComm":"kubelet","callerExe":"/usr/bin/kubelet"}`), &back); err != nil {
		t.Fatal(err)
	}
	if back.PodName != "p" || back.CallerExe != "/usr/bin/kubelet" || !back.At.Equal(time.Date(2026, 11, 27, 10, 0, 1, 0, time.UTC)) {
		t.Errorf("read back %+v", back)
	}
}

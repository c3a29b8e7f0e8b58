package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeBMC mimics sushy's fake driver closely enough for the linker: a Reset is pending until
// the system is read after its apply time; the change is PUT to the notifier.
type fakeBMC struct {
	mu      sync.Mutex
	state   string
	pending string
	applyAt time.Time
	notify  func(map[string]any)
	resets  []string
}

func (f *fakeBMC) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if u, p, ok := r.BasicAuth(); !ok || u != "u" || p != "p" {
		w.WriteHeader(401)
		return
	}
	f.mu.Lock()
	if f.pending != "" && time.Now().After(f.applyAt) {
		f.state, f.pending = f.pending, ""
	}
	switch {
	case r.Method == http.MethodGet:
		st := f.state
		f.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]string{"PowerState": st})
	case strings.HasSuffix(r.URL.Path, "/Actions/ComputerSystem.Reset"):
		var body struct{ ResetType string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.resets = append(f.resets, body.ResetType)
		target := "On"
		if body.ResetType == "ForceOff" || body.ResetType == "GracefulShutdown" {
			target = "Off"
		}
		pending := target
		if strings.Contains(body.ResetType, "Restart") {
			f.state = "Off"
			pending = body.ResetType
		}
		f.pending, f.applyAt = target, time.Now().Add(700*time.Millisecond)
		rec := map[string]any{"uuid": "11111111-0000-4000-8000-000000000021", "power_state": f.state,
			"pending_power": map[string]any{"power_state": pending}}
		f.mu.Unlock()
		if f.notify != nil {
			f.notify(rec)
		}
		w.WriteHeader(204)
	default:
		f.mu.Unlock()
		w.WriteHeader(404)
	}
}

func TestRedfishLink(t *testing.T) {
	e := startEnv(t)
	bmc := &fakeBMC{state: "On"}
	srv := httptest.NewServer(bmc)
	defer srv.Close()
	l, err := NewLinker(e.emu, LinkConfig{URL: srv.URL, Username: "u", Password: "p", Interval: time.Hour,
		Systems: map[string]string{"11111111-0000-4000-8000-000000000021": "/redfish/v1/Systems/w1"}})
	if err != nil {
		t.Fatal(err)
	}
	bmc.notify = l.Notify
	e.emu.mu.Lock()
	e.emu.Linker = l
	e.emu.mu.Unlock()
	l.Start()
	// Generous waits: they poll, and a busy CI machine can take seconds to schedule the emulator.
	m := e.emu.Find("worker-1")
	post := func(reset string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/redfish/v1/Systems/w1/Actions/ComputerSystem.Reset", strings.NewReader(`{"ResetType":"`+reset+`"}`))
		req.SetBasicAuth("u", "p")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	post("ForceOff")
	waitUntil(t, "machine off", 9*time.Second, func() bool { return !m.Snapshot().Powered })
	waitUntil(t, "Node NotReady", 6*time.Second, func() bool { return !nodeReady(e.node(t, "worker-1")) })
	post("On")
	waitUntil(t, "machine on", 9*time.Second, func() bool { s := m.Snapshot(); return s.Powered && s.State == StateRunning })
	waitUntil(t, "Node Ready", 6*time.Second, func() bool { return nodeReady(e.node(t, "worker-1")) })
	// A restart at the BMC: Off at once, On later.
	boot := m.Snapshot().BootID
	post("ForceRestart")
	waitUntil(t, "rebooted", 12*time.Second, func() bool { s := m.Snapshot(); return s.Powered && s.State == StateRunning && s.BootID != boot })
	if c := m.Snapshot().Counts; c["powerOff"] != 2 || c["powerOn"] != 2 {
		t.Fatalf("counts %v", c)
	}
	// A Talos shutdown is mirrored to the BMC as ForceOff.
	m.Shutdown()
	waitUntil(t, "BMC Off", 9*time.Second, func() bool {
		bmc.mu.Lock()
		defer bmc.mu.Unlock()
		return bmc.state == "Off" && bmc.resets[len(bmc.resets)-1] == "ForceOff"
	})
}

// A second change notified while the watch of the first is still running (the test above hit
// it: its "On" arrived as the "Off" watch was ending, and nothing watched the On): the watch
// follows the newest target, so the machine still comes back on.
func TestRedfishWatchFollowsTheNewestTarget(t *testing.T) {
	e := startEnv(t)
	const id = "11111111-0000-4000-8000-000000000021"
	bmc := &fakeBMC{state: "On"}
	srv := httptest.NewServer(bmc)
	defer srv.Close()
	l, err := NewLinker(e.emu, LinkConfig{URL: srv.URL, Username: "u", Password: "p", Interval: time.Hour,
		Systems: map[string]string{id: "/redfish/v1/Systems/w1"}})
	if err != nil {
		t.Fatal(err)
	}
	e.emu.mu.Lock()
	e.emu.Linker = l
	e.emu.mu.Unlock()
	l.Start()
	m := e.emu.Find("worker-1")
	// A ForceOff is pending: a watch for Off starts.
	l.Notify(map[string]any{"uuid": id, "power_state": "On", "pending_power": map[string]any{"power_state": "Off"}})
	// Before its first poll the BMC is Off with an On pending (applied 700 ms later).
	bmc.mu.Lock()
	bmc.state, bmc.pending, bmc.applyAt = "Off", "On", time.Now().Add(700*time.Millisecond)
	bmc.mu.Unlock()
	l.Notify(map[string]any{"uuid": id, "power_state": "Off", "pending_power": map[string]any{"power_state": "On"}})
	waitUntil(t, "machine off", 5*time.Second, func() bool { return !m.Snapshot().Powered })
	waitUntil(t, "machine on again", 9*time.Second, func() bool { s := m.Snapshot(); return s.Powered && s.State == StateRunning })
}

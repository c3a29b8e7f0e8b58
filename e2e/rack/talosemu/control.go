package main

import (
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"
)

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func errJSON(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

// readWord reads "on"/"off" from a JSON body ({"state": ...} or {"power": ...}), a plain
// text body, or ?state=.
func readWord(r *http.Request, keys ...string) string {
	if v := r.URL.Query().Get("state"); v != "" {
		return strings.ToLower(v)
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
	var obj map[string]any
	if json.Unmarshal(body, &obj) == nil {
		for _, k := range keys {
			if v, ok := obj[k].(string); ok {
				return strings.ToLower(v)
			}
		}
	}
	var s string
	if json.Unmarshal(body, &s) == nil {
		return strings.ToLower(s)
	}
	return strings.ToLower(strings.TrimSpace(string(body)))
}

// ControlHandler is the test/link API (loopback only).
func (e *Emulator) ControlHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, map[string]bool{"ok": true}) })
	mux.HandleFunc("GET /machines", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, e.Snapshots()) })
	mux.HandleFunc("GET /counts", func(w http.ResponseWriter, r *http.Request) {
		out := map[string]map[string]int{}
		for _, s := range e.Snapshots() {
			out[s.UUID] = s.Counts
		}
		writeJSON(w, 200, out)
	})
	mux.HandleFunc("GET /machines/{id}", func(w http.ResponseWriter, r *http.Request) {
		m := e.Find(r.PathValue("id"))
		if m == nil {
			errJSON(w, 404, "no such machine")
			return
		}
		writeJSON(w, 200, m.Snapshot())
	})
	mux.HandleFunc("POST /machines/{id}/power", func(w http.ResponseWriter, r *http.Request) {
		m := e.Find(r.PathValue("id"))
		if m == nil {
			errJSON(w, 404, "no such machine")
			return
		}
		source := r.URL.Query().Get("source")
		if source == "" {
			source = "control"
		}
		var changed bool
		switch readWord(r, "state", "power") {
		case "on":
			changed = m.PowerOn(source)
			if changed && source != "redfish" {
				e.notifyPower(m, true)
			}
		case "off":
			changed = m.PowerOff(source)
			if changed && source != "redfish" {
				e.notifyPower(m, false)
			}
		default:
			errJSON(w, 400, `want "on" or "off"`)
			return
		}
		writeJSON(w, 200, map[string]any{"changed": changed, "machine": m.Snapshot()})
	})
	mux.HandleFunc("GET /machines/{id}/upgrades", func(w http.ResponseWriter, r *http.Request) {
		m := e.Find(r.PathValue("id"))
		if m == nil {
			errJSON(w, 404, "no such machine")
			return
		}
		writeJSON(w, 200, m.UpgradeHistory())
	})
	mux.HandleFunc("POST /machines/{id}/version", func(w http.ResponseWriter, r *http.Request) {
		m := e.Find(r.PathValue("id"))
		if m == nil {
			errJSON(w, 404, "no such machine")
			return
		}
		var body struct {
			Version string `json:"version"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&body); err != nil || !refTag.MatchString(body.Version) {
			errJSON(w, 400, `want {"version": "v1.14.0"}`)
			return
		}
		m.SetVersion(body.Version)
		writeJSON(w, 200, m.Snapshot())
	})
	mux.HandleFunc("PUT /machines/{id}/reported-version", func(w http.ResponseWriter, r *http.Request) {
		m := e.Find(r.PathValue("id"))
		if m == nil {
			errJSON(w, 404, "no such machine")
			return
		}
		var body struct {
			Version string `json:"version"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&body); err != nil || (body.Version != "" && !refTag.MatchString(body.Version)) {
			errJSON(w, 400, `want {"version": "v1.13.9"}, or {"version": ""} to clear`)
			return
		}
		m.SetReportedVersion(body.Version)
		writeJSON(w, 200, m.UpgradeHistory())
	})
	mux.HandleFunc("GET /upgrade", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, e.upgradeView()) })
	mux.HandleFunc("PUT /upgrade", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			DelayMs *int64    `json:"delayMs"`
			Failing *[]string `json:"failing"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&body); err != nil || (body.DelayMs != nil && *body.DelayMs < 0) {
			errJSON(w, 400, `want {"delayMs"?: N >= 0, "failing"?: [image or tag, ...]}`)
			return
		}
		if body.DelayMs != nil {
			e.setUpgradeDelay(time.Duration(*body.DelayMs) * time.Millisecond)
		}
		if body.Failing != nil {
			for _, f := range e.Upgrades.Failing() {
				e.Upgrades.SetFailing(f, false)
			}
			for _, f := range *body.Failing {
				if f = strings.TrimSpace(f); f != "" {
					e.Upgrades.SetFailing(f, true)
				}
			}
		}
		writeJSON(w, 200, e.upgradeView())
	})
	mux.HandleFunc("POST /upgrade/failing", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Image string `json:"image"`
			Tag   string `json:"tag"`
			Fails *bool  `json:"fails"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&body); err != nil || (body.Image == "") == (body.Tag == "") {
			errJSON(w, 400, `want {"image": ref} or {"tag": "v1.14.0"}, and "fails": false to clear`)
			return
		}
		entry := body.Image + body.Tag
		e.Upgrades.SetFailing(entry, body.Fails == nil || *body.Fails)
		writeJSON(w, 200, e.upgradeView())
	})
	mux.HandleFunc("POST /machines/{id}/reset-address", func(w http.ResponseWriter, r *http.Request) {
		m := e.Find(r.PathValue("id"))
		if m == nil {
			errJSON(w, 404, "no such machine")
			return
		}
		var body struct {
			Host int `json:"host"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Host < 0 || body.Host > 254 {
			errJSON(w, 400, `want {"host": 1..254} (0 clears)`)
			return
		}
		if body.Host != 0 && e.hostTaken(body.Host, m) {
			errJSON(w, 409, "host in use")
			return
		}
		m.mu.Lock()
		m.NextHost = body.Host
		m.mu.Unlock()
		writeJSON(w, 200, map[string]any{"nextHost": body.Host, "nextAddress": machineAddress(e.Net, body.Host)})
	})
	mux.HandleFunc("POST /redfish/link", func(w http.ResponseWriter, r *http.Request) {
		var cfg LinkConfig
		if err := json.NewDecoder(r.Body).Decode(&cfg); err != nil || cfg.URL == "" {
			errJSON(w, 400, "want {url, username, password, caFile?, systems: {uuid: path}}")
			return
		}
		l, err := NewLinker(e, cfg)
		if err != nil {
			errJSON(w, 400, err.Error())
			return
		}
		e.mu.Lock()
		old := e.Linker
		e.Linker = l
		e.mu.Unlock()
		if old != nil {
			old.Stop()
		}
		l.Start()
		writeJSON(w, 200, map[string]any{"linked": len(cfg.Systems)})
	})
	mux.HandleFunc("PUT /redfish/notify", func(w http.ResponseWriter, r *http.Request) {
		var sys map[string]any
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&sys); err != nil {
			errJSON(w, 400, "want the fake system record")
			return
		}
		e.mu.Lock()
		l := e.Linker
		e.mu.Unlock()
		if l != nil {
			l.Notify(sys)
		}
		writeJSON(w, 200, map[string]bool{"ok": true})
	})
	mux.HandleFunc("DELETE /redfish/link", func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		old := e.Linker
		e.Linker = nil
		e.mu.Unlock()
		if old != nil {
			old.Stop()
		}
		writeJSON(w, 200, map[string]bool{"ok": true})
	})
	return mux
}

// upgradeView is GET /upgrade: the upgrade knobs in force.
func (e *Emulator) upgradeView() map[string]any {
	failing := e.Upgrades.Failing()
	sort.Strings(failing)
	return map[string]any{"delayMs": e.upgradeDelay().Milliseconds(), "failing": failing}
}

func (e *Emulator) hostTaken(host int, except *Machine) bool {
	for _, m := range e.Machines {
		if m == except {
			continue
		}
		m.mu.Lock()
		taken := m.Host == host || m.NextHost == host
		m.mu.Unlock()
		if taken {
			return true
		}
	}
	return false
}

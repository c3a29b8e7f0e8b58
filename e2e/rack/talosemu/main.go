// Command talosemu emulates the Talos machine API of every machine of the simulated rack,
// one machine per loopback address, and keeps each machine's Kubernetes Node in step.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "gen-tls" {
		if err := genTLSMain(os.Args[2:]); err != nil {
			log.Fatal(err)
		}
		return
	}
	var (
		fixture     = flag.String("fixture", "", "fixture file (YAML or JSON), e.g. e2e/rack/fixture/plant-a.yaml")
		netIdx      = flag.Int("net", 0, "rack network number: machines listen on 127.0.<10+net>.<host>")
		kubeconfig  = flag.String("kubeconfig", "", "admin kubeconfig of the rack (empty: no Node link)")
		stateDir    = flag.String("state-dir", "", "directory for talosconfigs and talosemu.json")
		controlAddr = flag.String("control-addr", "127.0.0.1:0", "listen address of the control HTTP API")
		port        = flag.Int("port", 50000, "Talos API port of every machine")
		rebootDown  = flag.Duration("reboot-down", DefaultTiming.RebootDown, "how long a reboot keeps a machine down")
		resetDown   = flag.Duration("reset-down", DefaultTiming.ResetDown, "how long a reset takes before maintenance mode answers")
		applyDown   = flag.Duration("apply-down", DefaultTiming.ApplyDown, "install reboot after ApplyConfiguration in maintenance mode")
		upgradeWait = flag.Duration("upgrade-delay", DefaultTiming.UpgradeDelay, "how long an Upgrade's installer runs before the machine reboots")
		upgradeFail = flag.String("upgrade-fails", "", "comma-separated image references or tags whose upgrade fails (the machine rolls back)")
	)
	flag.Parse()
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	log.SetPrefix("talosemu ")
	if *fixture == "" || *stateDir == "" {
		log.Fatal("--fixture and --state-dir are required")
	}
	fx, err := loadFixture(*fixture)
	if err != nil {
		log.Fatal(err)
	}
	timing := DefaultTiming
	timing.RebootDown, timing.ResetDown, timing.ApplyDown = *rebootDown, *resetDown, *applyDown
	timing.UpgradeDelay = *upgradeWait

	var link NodeLink = noNodeLink{}
	if *kubeconfig != "" {
		kl, err := newKubeNodeLink(*kubeconfig, timing.ReassertWait)
		if err != nil {
			log.Fatal(err)
		}
		link = kl
	}
	emu, err := NewEmulator(fx, *netIdx, *port, link, timing)
	if err != nil {
		log.Fatal(err)
	}
	emu.Upgrades = newUpgradeSettings(strings.Split(*upgradeFail, ","))
	if err := emu.Start(); err != nil {
		log.Fatal(err)
	}
	tcs, err := emu.WriteTalosconfigs(*stateDir)
	if err != nil {
		log.Fatal(err)
	}
	lis, err := net.Listen("tcp", *controlAddr)
	if err != nil {
		log.Fatal(err)
	}
	controlURL := "http://" + lis.Addr().String()
	hs := &http.Server{Handler: emu.ControlHandler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(lis) }()

	ready := map[string]any{
		"controlUrl":   controlURL,
		"pid":          os.Getpid(),
		"net":          *netIdx,
		"port":         *port,
		"talosconfigs": tcs,
		"machines":     emu.Snapshots(),
	}
	data, _ := json.MarshalIndent(ready, "", "  ")
	if err := writeFileAtomic(filepath.Join(*stateDir, "talosemu.json"), data, 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("ready: %d machines, control API %s", len(emu.Machines), controlURL)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = hs.Shutdown(ctx)
	emu.Stop()
}

// NewEmulator builds clusters and machines from the fixture (nothing listens yet).
func NewEmulator(fx *Fixture, netIdx, port int, link NodeLink, timing Timing) (*Emulator, error) {
	emu := &Emulator{Net: netIdx, Port: port, Clusters: map[string]*Cluster{}, Target: fx.Cluster, Nodes: link, Timing: timing,
		Upgrades: newUpgradeSettings(nil)}
	addCluster := func(name string, target bool) error {
		ca, err := NewCA(name)
		if err != nil {
			return err
		}
		admin, err := ca.Issue("admin", []string{"os:admin"}, nil, nil, false)
		if err != nil {
			return err
		}
		emu.Clusters[name] = &Cluster{Name: name, CA: ca, Admin: admin, Target: target}
		return nil
	}
	if err := addCluster(fx.Cluster, true); err != nil {
		return nil, err
	}
	if fx.Foreign != nil {
		if err := addCluster(fx.Foreign.Cluster, false); err != nil {
			return nil, err
		}
	}
	add := func(m *Machine) error {
		m.emu = emu
		m.Counts = map[string]int{}
		m.Powered = true
		m.State = StateRunning
		m.BootID = newBootID()
		if m.Version == "" {
			m.Version = TalosVersion
		}
		if r, ok := link.(bootIDReader); ok && m.NodeName != "" {
			if id := r.BootID(context.Background(), m.NodeName); id != "" {
				m.BootID = id
			}
		}
		if m.Mode == ModeConfigured {
			m.EtcdID = randomUint64()
		}
		cs, err := newCOSIState(m.UUID)
		if err != nil {
			return err
		}
		m.cosi = cs
		if other := emu.Find(m.UUID); other != nil {
			return fmt.Errorf("duplicate machine uuid %s", m.UUID)
		}
		emu.Machines = append(emu.Machines, m)
		return nil
	}
	for _, n := range fx.Nodes {
		if n.Virtual || n.Machine == nil {
			continue
		}
		role := "worker"
		if n.ControlPlane {
			role = "controlplane"
		}
		if err := add(&Machine{UUID: n.Machine.UUID, Host: n.Machine.Host, Mode: ModeConfigured, Cluster: fx.Cluster,
			Role: role, NodeName: n.Name, FixtureKey: n.Name, BMC: n.Machine.BMC, Version: n.Machine.TalosVersion}); err != nil {
			return nil, err
		}
	}
	for _, s := range fx.Spares {
		name := s.Name
		if name == "" {
			name = fmt.Sprintf("spare-%d", s.Host)
		}
		if err := add(&Machine{UUID: s.UUID, Host: s.Host, Mode: ModeMaintenance, FixtureKey: name, BMC: s.BMC}); err != nil {
			return nil, err
		}
	}
	if fx.Foreign != nil {
		for _, f := range fx.Foreign.Machines {
			role := f.Role
			if role != "controlplane" {
				role = "worker"
			}
			name := f.Name
			if name == "" {
				name = fmt.Sprintf("%s-%d", fx.Foreign.Cluster, f.Host)
			}
			if err := add(&Machine{UUID: f.UUID, Host: f.Host, Mode: ModeConfigured, Cluster: fx.Foreign.Cluster,
				Role: role, FixtureKey: name, BMC: f.BMC}); err != nil {
				return nil, err
			}
		}
	}
	return emu, nil
}

// Start opens every machine's listener, and writes each linked Node's osImage from the
// version its machine runs (the rack writes its Nodes before the emulator starts, with an
// osImage of its own; Version and the Node must agree for an upgrade to be checked).
func (e *Emulator) Start() error {
	w, canWrite := e.Nodes.(osImageWriter)
	for _, m := range e.Machines {
		m.mu.Lock()
		err := m.startLocked()
		node, version := m.linkedNodeLocked(), m.Version
		m.mu.Unlock()
		if err != nil {
			return err
		}
		if canWrite && node != "" {
			w.SetOSImage(context.Background(), node, osImage(version))
		}
	}
	return nil
}

// Stop closes every listener and the Redfish linker.
func (e *Emulator) Stop() {
	e.mu.Lock()
	if e.Linker != nil {
		e.Linker.Stop()
		e.Linker = nil
	}
	e.mu.Unlock()
	for _, m := range e.Machines {
		m.mu.Lock()
		m.gen++
		m.stopLocked()
		m.mu.Unlock()
	}
}

// Snapshots lists every machine, sorted by host.
func (e *Emulator) Snapshots() []Snapshot {
	out := make([]Snapshot, 0, len(e.Machines))
	for _, m := range e.Machines {
		out = append(out, m.Snapshot())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Host < out[j].Host })
	return out
}

// WriteTalosconfigs writes <dir>/<cluster>.talosconfig (and <cluster>-ca.crt) per cluster.
func (e *Emulator) WriteTalosconfigs(dir string) (map[string]string, error) {
	out := map[string]string{}
	for name, cl := range e.Clusters {
		var endpoints, nodes []string
		for _, m := range e.Members(name) {
			m.mu.Lock()
			if m.Role == "controlplane" {
				endpoints = append(endpoints, m.Address())
			}
			nodes = append(nodes, m.Address())
			m.mu.Unlock()
		}
		tc := &Talosconfig{Context: name, Contexts: map[string]*TalosconfigContext{name: {
			Endpoints: endpoints, Nodes: nodes,
			CA: b64(cl.CA.CertPEM), Crt: b64(cl.Admin.CertPEM), Key: b64(cl.Admin.KeyPEM),
		}}}
		path := filepath.Join(dir, name+".talosconfig")
		if err := writeFileAtomic(path, []byte(renderTalosconfig(tc)), 0o600); err != nil {
			return nil, err
		}
		if err := writeFileAtomic(filepath.Join(dir, name+"-ca.crt"), cl.CA.CertPEM, 0o644); err != nil {
			return nil, err
		}
		out[name] = path
	}
	return out, nil
}

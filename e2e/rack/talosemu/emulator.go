package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
)

// Modes and power states of a machine.
const (
	ModeMaintenance = "maintenance"
	ModeConfigured  = "configured"

	StateRunning   = "running"
	StateRebooting = "rebooting"
	StateOff       = "off"
	StateResetting = "resetting"
	StateApplying  = "applying"
)

// Verbs counted per machine.
var verbNames = []string{"reboot", "shutdown", "reset", "apply", "upgrade", "powerOn", "powerOff"}

// Cluster is a Talos cluster known to the emulator (its CA and admin client cert).
type Cluster struct {
	Name   string
	CA     *CA
	Admin  *Leaf
	Target bool // the rack's Kubernetes cluster (Nodes are linked)
}

// Timing knobs (tests shorten them).
type Timing struct {
	RebootDown   time.Duration // how long a reboot keeps the machine down
	ResetDown    time.Duration // how long a reset takes before maintenance mode answers
	ApplyDown    time.Duration // install+reboot after ApplyConfiguration in maintenance mode
	UpgradeDelay time.Duration // the installer's run after Upgrade, before the machine reboots
	ReassertWait []time.Duration
}

// DefaultTiming is what the rack uses.
var DefaultTiming = Timing{
	RebootDown:   2500 * time.Millisecond,
	ResetDown:    2 * time.Second,
	ApplyDown:    1500 * time.Millisecond,
	UpgradeDelay: 2 * time.Second,
	ReassertWait: []time.Duration{time.Second, 3 * time.Second, 6 * time.Second},
}

// Machine is one emulated bare-metal server running Talos.
type Machine struct {
	emu *Emulator

	mu         sync.Mutex
	UUID       string
	Host       int
	NextHost   int // address used after the next reset (0: keep)
	Mode       string
	Cluster    string
	Role       string // controlplane|worker ("" in maintenance)
	NodeName   string // Kubernetes node name (target cluster only)
	FixtureKey string // fixture node name / spare name
	BMC        bool
	Powered    bool
	State      string
	BootID     string
	Counts     map[string]int
	EtcdID     uint64
	Version    string          // the Talos version running (Version, the Node's osImage)
	Upgrades   []UpgradeRecord // every Upgrade call received
	pending    *pendingUpgrade // the install the next boot applies
	gen        int             // bumps on every power/mode transition, cancels stale timers

	// ReportedVersion, when set (control API), is what Version answers instead of Version while
	// the Node's osImage still follows Version: a machine whose two witnesses disagree.
	ReportedVersion string

	serverCert *tls.Certificate
	srv        *grpc.Server
	lis        net.Listener
	cosi       *cosiState
}

// Emulator holds every machine and cluster of the rack.
type Emulator struct {
	Net      int
	Clusters map[string]*Cluster
	Target   string
	Machines []*Machine
	Nodes    NodeLink
	Timing   Timing
	Port     int
	Linker   *Linker
	Upgrades *UpgradeSettings
	mu       sync.Mutex
}

func newBootID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func newActorID() string { return newBootID() }

// Address is the machine's current IP.
func (m *Machine) Address() string { return machineAddress(m.emu.Net, m.Host) }

func (m *Machine) count(verb string) {
	m.Counts[verb]++
}

// Snapshot is the JSON view of a machine in the control API.
type Snapshot struct {
	UUID     string         `json:"uuid"`
	Name     string         `json:"name,omitempty"`
	NodeName string         `json:"nodeName,omitempty"`
	Host     int            `json:"host"`
	Address  string         `json:"address"`
	Endpoint string         `json:"endpoint"`
	Mode     string         `json:"mode"`
	Cluster  string         `json:"cluster,omitempty"`
	Role     string         `json:"role,omitempty"`
	State    string         `json:"state"`
	Powered  bool           `json:"powered"`
	BMC      bool           `json:"bmc"`
	BootID   string         `json:"bootID,omitempty"`
	Version  string         `json:"version"`
	Counts   map[string]int `json:"counts"`
}

func (m *Machine) Snapshot() Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	counts := map[string]int{}
	for _, v := range verbNames {
		counts[v] = m.Counts[v]
	}
	return Snapshot{
		UUID: m.UUID, Name: m.FixtureKey, NodeName: m.NodeName, Host: m.Host,
		Address: m.Address(), Endpoint: fmt.Sprintf("%s:%d", m.Address(), m.emu.Port),
		Mode: m.Mode, Cluster: m.Cluster, Role: m.Role, State: m.State, Powered: m.Powered,
		BMC: m.BMC, BootID: m.BootID, Version: m.Version, Counts: counts,
	}
}

// Find returns the machine with that UUID (case-insensitive) or node name.
func (e *Emulator) Find(id string) *Machine {
	for _, m := range e.Machines {
		m.mu.Lock()
		ok := strings.EqualFold(m.UUID, id) || (m.NodeName != "" && m.NodeName == id) || (m.FixtureKey != "" && m.FixtureKey == id)
		m.mu.Unlock()
		if ok {
			return m
		}
	}
	return nil
}

// FindByAddress returns the machine currently at that IP.
func (e *Emulator) FindByAddress(addr string) *Machine {
	for _, m := range e.Machines {
		m.mu.Lock()
		ok := m.Address() == addr
		m.mu.Unlock()
		if ok {
			return m
		}
	}
	return nil
}

// Members returns the configured machines of a cluster, sorted by host.
func (e *Emulator) Members(cluster string) []*Machine {
	var out []*Machine
	for _, m := range e.Machines {
		m.mu.Lock()
		ok := m.Mode == ModeConfigured && m.Cluster == cluster
		m.mu.Unlock()
		if ok {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Host < out[j].Host })
	return out
}

// tlsConfig is chosen at handshake time from the machine's mode.
func (m *Machine) tlsConfig() (*tls.Config, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.serverCert == nil {
		return nil, fmt.Errorf("no server certificate")
	}
	cfg := &tls.Config{
		Certificates: []tls.Certificate{*m.serverCert},
		NextProtos:   []string{"h2"},
	}
	if m.Mode == ModeConfigured {
		cl := m.emu.Clusters[m.Cluster]
		cfg.MinVersion = tls.VersionTLS13
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
		cfg.ClientCAs = cl.CA.Pool
	} else {
		cfg.MinVersion = tls.VersionTLS12
		cfg.ClientAuth = tls.NoClientCert
	}
	return cfg, nil
}

// issueServerCert makes the certificate for the current mode/address: signed by the cluster
// CA when configured, self-signed (throw-away CA) in maintenance mode. Caller holds m.mu.
func (m *Machine) issueServerCertLocked() error {
	ip := net.ParseIP(m.Address())
	var ca *CA
	var err error
	if m.Mode == ModeConfigured {
		ca = m.emu.Clusters[m.Cluster].CA
	} else {
		ca, err = NewCA("talos-maintenance")
		if err != nil {
			return err
		}
	}
	leaf, err := ca.Issue(m.Address(), []string{"talos"}, []net.IP{ip}, []string{"localhost"}, true)
	if err != nil {
		return err
	}
	m.serverCert = &leaf.TLS
	return nil
}

// startLocked opens the listener for the current address and mode. Caller holds m.mu.
func (m *Machine) startLocked() error {
	if m.srv != nil {
		return nil
	}
	if err := m.issueServerCertLocked(); err != nil {
		return err
	}
	addr := fmt.Sprintf("%s:%d", m.Address(), m.emu.Port)
	var lis net.Listener
	var err error
	for i := 0; i < 50; i++ {
		lis, err = net.Listen("tcp", addr)
		if err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	tlsLis := &tlsListener{Listener: lis, cfg: &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		return m.tlsConfig()
	}}}
	srv := newGRPCServer(m)
	m.srv, m.lis = srv, lis
	go func() { _ = srv.Serve(tlsLis) }()
	return nil
}

// stopLocked closes the listener at once (the machine stops answering, and its address is
// free for the next boot) and ends its connections without the lock: grpc's Stop waits for
// the handshakes in flight, and a handshake takes m.mu to choose its TLS config (tlsConfig),
// so a Stop under the lock waited on itself and the machine never came back.
func (m *Machine) stopLocked() {
	if m.srv == nil {
		return
	}
	srv, lis := m.srv, m.lis
	m.srv, m.lis = nil, nil
	_ = lis.Close()
	go srv.Stop()
}

// after runs fn after d unless the machine changed state meanwhile.
func (m *Machine) after(d time.Duration, gen int, fn func()) {
	time.AfterFunc(d, func() {
		m.mu.Lock()
		stale := m.gen != gen
		m.mu.Unlock()
		if !stale {
			fn()
		}
	})
}

func (m *Machine) logf(format string, args ...any) {
	log.Printf("machine %s (%s): %s", m.UUID, m.Address(), fmt.Sprintf(format, args...))
}

// Reboot: down now, up again after Timing.RebootDown with a new boot ID.
func (m *Machine) Reboot() string {
	m.mu.Lock()
	m.count("reboot")
	m.restartLocked("Rebooting")
	m.mu.Unlock()
	m.logf("reboot")
	return newActorID()
}

// restartLocked takes the machine down (~100 ms later, so a gRPC answer can leave first) and
// boots it after Timing.RebootDown with a new boot ID; the reason shows on the Node. Caller
// holds m.mu.
func (m *Machine) restartLocked(reason string) {
	m.gen++
	gen := m.gen
	m.State = StateRebooting
	node := m.linkedNodeLocked()
	go func() {
		// Let the gRPC answer leave before the listener closes.
		time.Sleep(100 * time.Millisecond)
		m.mu.Lock()
		if m.gen == gen {
			m.stopLocked()
		}
		m.mu.Unlock()
		if node != "" {
			m.emu.Nodes.PowerOff(context.Background(), node, reason)
		}
	}()
	m.after(m.emu.Timing.RebootDown, gen, func() { m.boot(gen) })
}

// boot brings a powered machine up in its current mode.
func (m *Machine) boot(gen int) {
	m.mu.Lock()
	if m.gen != gen {
		m.mu.Unlock()
		return
	}
	m.Powered = true
	m.State = StateRunning
	m.BootID = newBootID()
	bootID := m.BootID
	m.applyPendingLocked()
	version := m.Version
	if err := m.startLocked(); err != nil {
		m.logf("start: %v", err)
	}
	node := m.linkedNodeLocked()
	m.mu.Unlock()
	m.logf("up (%s, %s)", m.Mode, version)
	if node != "" {
		m.emu.Nodes.PowerOn(context.Background(), node, bootID, osImage(version))
	}
}

// Shutdown: down now, stays off until PowerOn.
func (m *Machine) Shutdown() string {
	m.mu.Lock()
	m.count("shutdown")
	m.mu.Unlock()
	m.logf("shutdown")
	go func() {
		time.Sleep(100 * time.Millisecond)
		m.powerOff("shutdown", false)
	}()
	return newActorID()
}

// PowerOff is a hard power cut (control API / Redfish). counted: powerOff.
func (m *Machine) PowerOff(source string) bool {
	return m.powerOff(source, true)
}

// powerOff cuts power (check, count and transition under one lock, so concurrent callers
// count once).
func (m *Machine) powerOff(source string, count bool) bool {
	m.mu.Lock()
	if !m.Powered {
		m.mu.Unlock()
		return false
	}
	if count {
		m.count("powerOff")
	}
	m.gen++
	m.Powered = false
	m.State = StateOff
	m.stopLocked()
	node := m.linkedNodeLocked()
	m.mu.Unlock()
	m.logf("power off (%s)", source)
	if node != "" {
		m.emu.Nodes.PowerOff(context.Background(), node, "PoweredOff")
	}
	if source == "shutdown" {
		m.emu.notifyPower(m, false)
	}
	return true
}

// PowerOn boots a machine that is off. counted: powerOn.
func (m *Machine) PowerOn(source string) bool {
	m.mu.Lock()
	if m.Powered {
		m.mu.Unlock()
		return false
	}
	m.count("powerOn")
	m.gen++
	gen := m.gen
	m.State = StateRebooting
	m.Powered = true
	m.mu.Unlock()
	m.logf("power on (%s)", source)
	// A short boot; the BMC's own delay has already passed.
	m.after(500*time.Millisecond, gen, func() { m.boot(gen) })
	return true
}

// Reset wipes the machine: it leaves its cluster and answers in maintenance mode after
// Timing.ResetDown, at NextHost if one was set. The Node object is kept (NotReady, power
// annotation), as a real reset leaves it behind.
func (m *Machine) Reset() string {
	m.mu.Lock()
	m.count("reset")
	m.cancelPendingLocked()
	m.gen++
	gen := m.gen
	m.State = StateResetting
	node := m.linkedNodeLocked()
	m.mu.Unlock()
	m.logf("reset")
	go func() {
		time.Sleep(100 * time.Millisecond)
		m.mu.Lock()
		if m.gen == gen {
			m.stopLocked()
		}
		m.mu.Unlock()
		if node != "" {
			m.emu.Nodes.PowerOff(context.Background(), node, "Reset")
		}
	}()
	m.after(m.emu.Timing.ResetDown, gen, func() {
		m.mu.Lock()
		m.Mode = ModeMaintenance
		m.Cluster = ""
		m.Role = ""
		m.NodeName = ""
		if m.NextHost != 0 {
			m.Host = m.NextHost
			m.NextHost = 0
		}
		m.mu.Unlock()
		m.boot(gen)
	})
	return newActorID()
}

// Apply joins a maintenance-mode machine to a cluster (after an install reboot).
func (m *Machine) Apply(cfg *appliedConfig) {
	m.mu.Lock()
	m.count("apply")
	if m.Mode == ModeConfigured {
		m.mu.Unlock()
		m.logf("apply (configured; no-op)")
		return
	}
	m.gen++
	gen := m.gen
	m.State = StateApplying
	m.mu.Unlock()
	m.logf("apply: joining %s as %s (hostname %q)", cfg.Cluster, cfg.Role, cfg.Hostname)
	go func() {
		time.Sleep(100 * time.Millisecond)
		m.mu.Lock()
		if m.gen == gen {
			m.stopLocked()
		}
		m.mu.Unlock()
	}()
	m.after(m.emu.Timing.ApplyDown, gen, func() {
		m.mu.Lock()
		m.Mode = ModeConfigured
		m.Cluster = cfg.Cluster
		m.Role = cfg.Role
		if cl := m.emu.Clusters[cfg.Cluster]; cl != nil && cl.Target {
			name := cfg.Hostname
			if name == "" {
				name = "talos-" + strings.ToLower(strings.SplitN(m.UUID, "-", 2)[0])
			}
			m.NodeName = name
		}
		m.EtcdID = randomUint64()
		m.BootID = newBootID()
		node, bootID, role, addr, uuid, version := m.NodeName, m.BootID, m.Role, m.Address(), m.UUID, m.Version
		m.mu.Unlock()
		if node != "" {
			m.emu.Nodes.Join(context.Background(), NodeSpec{Name: node, UUID: uuid, BootID: bootID, ControlPlane: role == "controlplane", Address: addr, Version: version})
		}
		m.boot(gen)
	})
}

// linkedNodeLocked is the Kubernetes node to keep in step (target cluster only).
func (m *Machine) linkedNodeLocked() string {
	if m.Mode != ModeConfigured {
		return ""
	}
	if cl := m.emu.Clusters[m.Cluster]; cl == nil || !cl.Target {
		return ""
	}
	return m.NodeName
}

func randomUint64() uint64 {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	var v uint64
	for _, x := range b {
		v = v<<8 | uint64(x)
	}
	return v
}

// notifyPower tells the Redfish linker (if any) about a power change made through Talos.
func (e *Emulator) notifyPower(m *Machine, on bool) {
	e.mu.Lock()
	l := e.Linker
	e.mu.Unlock()
	if l != nil {
		l.talosPowerChanged(m, on)
	}
}

// tlsListener is tls.NewListener with a gentler close: see lingerConn.
type tlsListener struct {
	net.Listener
	cfg *tls.Config
}

func (l *tlsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return tls.Server(&lingerConn{Conn: c}, l.cfg), nil
}

// lingerConn half-closes and drains before closing. A TLS 1.3 client without a certificate has
// already sent its first request when the server rejects it; closing a socket with unread data
// makes the kernel send RST, which can destroy the "certificate required" alert before the
// client reads it (the client would then see "broken pipe"). Sending FIN and draining first lets
// the alert arrive, as the probe of a client without a certificate relies on.
type lingerConn struct {
	net.Conn
	once sync.Once
}

func (c *lingerConn) Close() error {
	c.once.Do(func() {
		tc, ok := c.Conn.(*net.TCPConn)
		if !ok {
			_ = c.Conn.Close()
			return
		}
		_ = tc.CloseWrite()
		go func() {
			_ = tc.SetReadDeadline(time.Now().Add(2 * time.Second))
			_, _ = io.Copy(io.Discard, tc)
			_ = tc.Close()
		}()
	})
	return nil
}

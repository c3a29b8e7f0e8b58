package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// LinkConfig tells the linker where sushy-tools serves the BMCs.
type LinkConfig struct {
	URL      string            `json:"url"`
	Username string            `json:"username"`
	Password string            `json:"password"`
	CAFile   string            `json:"caFile"`
	Insecure bool              `json:"insecure"`
	Systems  map[string]string `json:"systems"` // machine uuid -> system path (/redfish/v1/Systems/<id>)
	// Interval between polls of every system: 500 ms by default; with sushy's external
	// notifier pointed at PUT /redfish/notify a slow safety poll (e.g. 10 s) is enough.
	Interval time.Duration `json:"intervalNs"`
}

// Linker polls each ComputerSystem's PowerState and turns machines off/on to match; it also
// pushes Talos-side power changes (shutdown, control API) to the BMC.
type Linker struct {
	emu    *Emulator
	cfg    LinkConfig
	client *http.Client
	stop   chan struct{}
	wg     sync.WaitGroup

	mu       sync.Mutex
	last     map[string]string    // uuid -> last PowerState seen
	lastAt   map[string]time.Time // when the state behind last was read (request start)
	watching map[string]*powerWatch
}

// NewLinker validates the config and builds the HTTP client.
func NewLinker(emu *Emulator, cfg LinkConfig) (*Linker, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: cfg.Insecure} //nolint:gosec // explicit opt-in
	if cfg.CAFile != "" {
		pemData, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pemData) {
			return nil, fmt.Errorf("no certificate in %s", cfg.CAFile)
		}
		tr.TLSClientConfig.RootCAs = pool
	}
	for id := range cfg.Systems {
		if emu.Find(id) == nil {
			return nil, fmt.Errorf("no machine %s", id)
		}
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 500 * time.Millisecond
	}
	return &Linker{emu: emu, cfg: cfg, client: &http.Client{Transport: tr, Timeout: 5 * time.Second},
		stop: make(chan struct{}), last: map[string]string{}, lastAt: map[string]time.Time{}}, nil
}

// Notify handles sushy's external notification (a PUT of the fake system's record on every
// change, including a Reset that is still pending): the new PowerState is applied at once and
// the system is watched every 500 ms until the pending change has landed (sushy applies a
// pending change only when the system is read).
func (l *Linker) Notify(sys map[string]any) {
	id, _ := sys["uuid"].(string)
	path, ok := l.cfg.Systems[id]
	if !ok {
		return
	}
	if ps, _ := sys["power_state"].(string); ps != "" {
		l.observe(id, ps, time.Now())
	}
	if pending, _ := sys["pending_power"].(map[string]any); pending != nil {
		target, _ := pending["power_state"].(string)
		if target != "Off" {
			target = "On" // On, ForceOn, *Restart all end On
		}
		l.watch(id, path, target)
	}
}

// powerWatch is the state a watched system is expected to reach, and until when.
type powerWatch struct {
	target   string
	deadline time.Time
}

// watch polls one system until it reports the newest target asked (at most 20 s after that
// ask). A change notified while a watch runs retargets it: a second watcher would be refused,
// and the first one, ending on the older target, would leave the newer change unseen.
func (l *Linker) watch(id, path, target string) {
	l.mu.Lock()
	if l.watching == nil {
		l.watching = map[string]*powerWatch{}
	}
	deadline := time.Now().Add(20 * time.Second)
	if w := l.watching[id]; w != nil {
		w.target, w.deadline = target, deadline
		l.mu.Unlock()
		return
	}
	select {
	case <-l.stop:
		l.mu.Unlock()
		return
	default:
	}
	w := &powerWatch{target: target, deadline: deadline}
	l.watching[id] = w
	l.wg.Add(1)
	l.mu.Unlock()
	// done decides and ends the watch under the lock a retarget takes, so none is lost.
	done := func(stopped bool) bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		if stopped || l.last[id] == w.target || time.Now().After(w.deadline) {
			delete(l.watching, id)
			return true
		}
		return false
	}
	go func() {
		defer l.wg.Done()
		for {
			select {
			case <-l.stop:
				done(true)
				return
			case <-time.After(500 * time.Millisecond):
			}
			l.pollOne(id, path)
			if done(false) {
				return
			}
		}
	}()
}

// Start begins polling.
func (l *Linker) Start() {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		t := time.NewTicker(l.cfg.Interval)
		defer t.Stop()
		for {
			l.pollAll()
			select {
			case <-l.stop:
				return
			case <-t.C:
			}
		}
	}()
}

// Stop ends polling.
func (l *Linker) Stop() {
	l.mu.Lock()
	close(l.stop)
	l.mu.Unlock()
	l.wg.Wait()
}

func (l *Linker) do(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(l.cfg.URL, "/")+path, rd)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(l.cfg.Username, l.cfg.Password)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return l.client.Do(req)
}

func (l *Linker) pollAll() {
	for id, path := range l.cfg.Systems {
		select {
		case <-l.stop:
			return
		default:
		}
		l.pollOne(id, path)
	}
}

func (l *Linker) pollOne(id, path string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sent := time.Now()
	resp, err := l.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return
	}
	var sys struct {
		PowerState string `json:"PowerState"`
	}
	err = json.NewDecoder(resp.Body).Decode(&sys)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		return
	}
	l.observe(id, sys.PowerState, sent)
}

// observe reacts to a PowerState change seen at the BMC. at is when the state was read: a
// poll that was sent before a newer observation (a notification, or a later poll) is stale and
// ignored, so concurrent reads cannot flip a machine back and forth.
func (l *Linker) observe(id, ps string, at time.Time) {
	l.mu.Lock()
	if at.Before(l.lastAt[id]) {
		l.mu.Unlock()
		return
	}
	l.lastAt[id] = at
	prev, seen := l.last[id]
	l.last[id] = ps
	l.mu.Unlock()
	if seen && prev == ps {
		return
	}
	m := l.emu.Find(id)
	if m == nil {
		return
	}
	switch ps {
	case "Off", "PoweringOff":
		if m.PowerOff("redfish") {
			log.Printf("redfish: %s PowerState %s -> machine off", id, ps)
		}
	case "On", "PoweringOn":
		if seen && m.PowerOn("redfish") {
			log.Printf("redfish: %s PowerState %s -> machine on", id, ps)
		}
	}
}

// talosPowerChanged mirrors a power change made through Talos or the control API at the BMC
// (sushy applies it 1 to 11 s later).
func (l *Linker) talosPowerChanged(m *Machine, on bool) {
	path, ok := l.cfg.Systems[m.UUID]
	if !ok {
		return
	}
	reset := "ForceOff"
	if on {
		reset = "On"
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := l.do(ctx, http.MethodPost, path+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": reset})
		if err != nil {
			log.Printf("redfish: mirror %s to %s: %v", reset, m.UUID, err)
			return
		}
		resp.Body.Close()
		log.Printf("redfish: mirrored %s to %s (%d)", reset, m.UUID, resp.StatusCode)
		target := "Off"
		if on {
			target = "On"
		}
		l.watch(m.UUID, path, target)
	}()
}

// genTLSMain: `talosemu gen-tls --dir D [--ip 127.0.0.1] [--name redfish]` writes D/ca.crt,
// D/server.crt and D/server.key (ECDSA P-256; the key as PKCS#8 "PRIVATE KEY"), for serving
// sushy-tools over HTTPS.
func genTLSMain(args []string) error {
	fs := flag.NewFlagSet("gen-tls", flag.ExitOnError)
	dir := fs.String("dir", "", "output directory")
	ips := fs.String("ip", "127.0.0.1", "comma-separated IP SANs")
	name := fs.String("name", "rackside-redfish", "subject common name")
	_ = fs.Parse(args)
	if *dir == "" {
		return fmt.Errorf("--dir is required")
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: *name + " CA", Organization: []string{"rackside"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(10 * 365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	var sans []net.IP
	for _, s := range strings.Split(*ips, ",") {
		if ip := net.ParseIP(strings.TrimSpace(s)); ip != nil {
			sans = append(sans, ip)
		}
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: *name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(365 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: sans, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	pk8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	files := map[string][]byte{
		"ca.crt":     pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		"server.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"server.key": pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk8}),
	}
	for n, b := range files {
		if err := writeFileAtomic(filepath.Join(*dir, n), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

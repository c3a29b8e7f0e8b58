package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
)

// StateUpgrading: an Upgrade was accepted and the installer is running; the machine still
// answers until it reboots into the new version.
const StateUpgrading = "upgrading"

// Outcomes of an upgrade request, as the control API reports them.
const (
	UpgradePending    = "pending"    // accepted, the machine has not rebooted into it yet
	UpgradeStaged     = "staged"     // stage=true: kept for the reboot that follows, installed early in that boot
	UpgradeInstalled  = "installed"  // the machine came back on the new version
	UpgradeRolledBack = "rolledBack" // the image fails: the machine came back on the old version
	UpgradeRefused    = "refused"    // answered with an error, nothing changed
	UpgradeCancelled  = "cancelled"  // a reset or a newer request replaced it before it ran
)

// UpgradeRecord is one Upgrade call a machine received (control API:
// GET /machines/{id}/upgrades), so a test can assert how many were sent and what.
type UpgradeRecord struct {
	At       time.Time `json:"at"`
	Image    string    `json:"image"`
	Version  string    `json:"version,omitempty"` // the image's tag
	Preserve bool      `json:"preserve"`
	Stage    bool      `json:"stage"`
	Force    bool      `json:"force"`
	Result   string    `json:"result"`
	Error    string    `json:"error,omitempty"`
	From     string    `json:"from"`         // the version running when the request came
	To       string    `json:"to,omitempty"` // the version running after the reboot
}

// pendingUpgrade is the install waiting for the machine's next boot (index into Upgrades).
type pendingUpgrade struct {
	record  int
	image   string
	version string
}

// UpgradeSettings are the rack-wide knobs of the upgrade emulation.
type UpgradeSettings struct {
	mu sync.Mutex
	// failing holds image references (anything with ':' or '/') and bare tags whose install
	// fails: the machine reboots and comes back on the version it ran, as Talos rolls back.
	failing map[string]bool
}

func newUpgradeSettings(failing []string) *UpgradeSettings {
	s := &UpgradeSettings{failing: map[string]bool{}}
	for _, f := range failing {
		if f = strings.TrimSpace(f); f != "" {
			s.failing[f] = true
		}
	}
	return s
}

// Fails tells whether installing image (tag version) fails.
func (s *UpgradeSettings) Fails(image, version string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failing[image] || s.failing[version]
}

// SetFailing marks (or unmarks) an image reference or a tag as failing.
func (s *UpgradeSettings) SetFailing(entry string, fails bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fails {
		s.failing[entry] = true
	} else {
		delete(s.failing, entry)
	}
}

// Failing lists the failing entries.
func (s *UpgradeSettings) Failing() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.failing))
	for f := range s.failing {
		out = append(out, f)
	}
	return out
}

// Reference grammar of a container image, the subset an installer reference uses:
// [domain[:port]/]path[:tag][@digest], path components lowercase.
var (
	refDomain    = regexp.MustCompile(`^(?:localhost|[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*)(?::[0-9]+)?$`)
	refComponent = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)
	refTag       = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	refDigest    = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)
)

// parseInstallerImage checks an installer image reference and returns its tag, which is the
// Talos version it installs (factory.talos.dev/installer/<schematic>:v1.14.0,
// ghcr.io/siderolabs/installer:v1.14.0). A reference without a tag names no version.
func parseInstallerImage(ref string) (string, error) {
	if ref == "" {
		return "", fmt.Errorf("an installer image is required")
	}
	if strings.TrimSpace(ref) != ref {
		return "", fmt.Errorf("invalid reference format %q: surrounding whitespace", ref)
	}
	name := ref
	if at := strings.Index(name, "@"); at >= 0 {
		if !refDigest.MatchString(name[at+1:]) {
			return "", fmt.Errorf("invalid reference format %q: bad digest", ref)
		}
		name = name[:at]
	}
	var tag string
	if colon := strings.LastIndex(name, ":"); colon > strings.LastIndex(name, "/") {
		name, tag = name[:colon], name[colon+1:]
		if !refTag.MatchString(tag) {
			return "", fmt.Errorf("invalid reference format %q: bad tag %q", ref, tag)
		}
	}
	parts := strings.Split(name, "/")
	if len(parts) > 1 && (strings.ContainsAny(parts[0], ".:") || parts[0] == "localhost") {
		if !refDomain.MatchString(parts[0]) {
			return "", fmt.Errorf("invalid reference format %q: bad registry %q", ref, parts[0])
		}
		parts = parts[1:]
	}
	for _, p := range parts {
		if !refComponent.MatchString(p) {
			return "", fmt.Errorf("invalid reference format %q: repository name must be lowercase", ref)
		}
	}
	if tag == "" {
		return "", fmt.Errorf("invalid reference format %q: no tag (the tag is the Talos version to install)", ref)
	}
	return tag, nil
}

// upgradeDelay is Timing.UpgradeDelay, which the control API can change while machines run.
func (e *Emulator) upgradeDelay() time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.Timing.UpgradeDelay
}

func (e *Emulator) setUpgradeDelay(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.Timing.UpgradeDelay = d
}

// osImage is what a Talos node reports as status.nodeInfo.osImage.
func osImage(version string) string { return "Talos (" + version + ")" }

// UpgradeRequest is what the emulator takes from machine.UpgradeRequest.
type UpgradeRequest struct {
	Image    string
	Version  string
	Preserve bool
	Stage    bool
	Force    bool
}

// Upgrade accepts an install of req.Version: the machine keeps answering for
// Timing.UpgradeDelay, then reboots and comes back on the new version, or on the old one when
// the image fails. Without stage the installer runs in that time; with stage Talos only keeps
// the image and reboots at once, installing it early in the next boot before anything holds
// the disk, so to a caller both look the same (the record says which). A request while
// another install is running is refused (recorded all the same).
func (m *Machine) Upgrade(req UpgradeRequest) (string, error) {
	m.mu.Lock()
	m.count("upgrade")
	rec := UpgradeRecord{
		At: time.Now().UTC(), Image: req.Image, Version: req.Version, Preserve: req.Preserve,
		Stage: req.Stage, Force: req.Force, From: m.Version,
	}
	if m.State == StateUpgrading {
		rec.Result, rec.Error = UpgradeRefused, "an upgrade is already in progress"
		m.Upgrades = append(m.Upgrades, rec)
		m.mu.Unlock()
		return "", fmt.Errorf("%s", rec.Error)
	}
	if m.pending != nil {
		// An install whose reboot never came (the machine lost power first) is replaced.
		m.Upgrades[m.pending.record].Result = UpgradeCancelled
	}
	rec.Result = UpgradePending
	if req.Stage {
		rec.Result = UpgradeStaged
	}
	m.Upgrades = append(m.Upgrades, rec)
	m.pending = &pendingUpgrade{record: len(m.Upgrades) - 1, image: req.Image, version: req.Version}
	m.State = StateUpgrading
	gen := m.gen
	m.mu.Unlock()
	if req.Stage {
		m.logf("upgrade to %s (%s): staged, rebooting to install it", req.Version, req.Image)
	} else {
		m.logf("upgrade to %s (%s): installing", req.Version, req.Image)
	}
	m.after(m.emu.upgradeDelay(), gen, func() {
		m.mu.Lock()
		if m.gen != gen {
			m.mu.Unlock()
			return
		}
		m.restartLocked("Upgrading")
		m.mu.Unlock()
	})
	return newActorID(), nil
}

// RefuseUpgrade records an Upgrade answered with an error before anything changed.
func (m *Machine) RefuseUpgrade(image string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.count("upgrade")
	m.Upgrades = append(m.Upgrades, UpgradeRecord{
		At: time.Now().UTC(), Image: image, Result: UpgradeRefused, Error: err.Error(), From: m.Version,
	})
}

// applyPendingLocked runs at boot: the pending install lands, or rolls back when its image
// fails. Caller holds m.mu.
func (m *Machine) applyPendingLocked() {
	p := m.pending
	if p == nil {
		return
	}
	m.pending = nil
	rec := &m.Upgrades[p.record]
	if m.emu.Upgrades.Fails(p.image, p.version) {
		rec.Result = UpgradeRolledBack
		m.logf("upgrade to %s failed: rolled back to %s", p.version, m.Version)
	} else {
		m.Version = p.version
		rec.Result = UpgradeInstalled
		m.logf("upgraded to %s", p.version)
	}
	rec.To = m.Version
}

// cancelPendingLocked drops an install that will not run (reset). Caller holds m.mu.
func (m *Machine) cancelPendingLocked() {
	if m.pending != nil {
		m.Upgrades[m.pending.record].Result = UpgradeCancelled
		m.pending = nil
	}
}

// SetVersion sets the version a machine runs (control API), and its Node's osImage.
func (m *Machine) SetVersion(version string) {
	m.mu.Lock()
	m.Version = version
	node := m.linkedNodeLocked()
	m.mu.Unlock()
	if w, ok := m.emu.Nodes.(osImageWriter); ok && node != "" {
		w.SetOSImage(context.Background(), node, osImage(version))
	}
}

// SetReportedVersion makes Version answer version whatever the machine runs ("" clears it);
// the Node's osImage keeps following the version run.
func (m *Machine) SetReportedVersion(version string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ReportedVersion = version
}

// UpgradeHistory is the control API's view of a machine's upgrades.
type UpgradeHistory struct {
	UUID     string          `json:"uuid"`
	NodeName string          `json:"nodeName,omitempty"`
	Version  string          `json:"version"`
	Staged   string          `json:"staged,omitempty"`          // the version staged, installed at the reboot under way
	Reported string          `json:"reportedVersion,omitempty"` // what Version answers instead, when set
	Count    int             `json:"count"`
	Images   []string        `json:"images"`
	Requests []UpgradeRecord `json:"requests"`
}

func (m *Machine) UpgradeHistory() UpgradeHistory {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := UpgradeHistory{
		UUID: m.UUID, NodeName: m.NodeName, Version: m.Version, Reported: m.ReportedVersion, Count: len(m.Upgrades),
		Images: []string{}, Requests: append([]UpgradeRecord{}, m.Upgrades...),
	}
	if m.pending != nil && m.Upgrades[m.pending.record].Result == UpgradeStaged {
		h.Staged = m.pending.version
	}
	for _, r := range m.Upgrades {
		h.Images = append(h.Images, r.Image)
	}
	return h
}

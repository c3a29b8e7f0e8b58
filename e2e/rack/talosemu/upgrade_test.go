package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

const (
	installerV114 = "factory.talos.dev/installer/376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba:v1.14.0"
	installerV115 = "ghcr.io/siderolabs/installer:v1.15.0"
)

func versionOf(t *testing.T, conn *grpc.ClientConn) (string, error) {
	t.Helper()
	v, err := machine.NewMachineServiceClient(conn).Version(ctx5(t), &emptypb.Empty{})
	if err != nil {
		return "", err
	}
	return v.GetMessages()[0].GetVersion().GetTag(), nil
}

func (e *env) upgrades(t *testing.T, id string) UpgradeHistory {
	t.Helper()
	resp, err := http.Get(e.ctrl.URL + "/machines/" + id + "/upgrades")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET upgrades: %d", resp.StatusCode)
	}
	var h UpgradeHistory
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return h
}

func (e *env) control(t *testing.T, method, path, body string) {
	t.Helper()
	req, err := http.NewRequest(method, e.ctrl.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("%s %s: %d", method, path, resp.StatusCode)
	}
}

// waitReboot waits for the Node to go NotReady and come back Ready with a boot ID other than
// before, and returns the Node's osImage then.
func (e *env) waitReboot(t *testing.T, node, bootBefore string) string {
	t.Helper()
	waitUntil(t, node+" NotReady", 3*time.Second, func() bool {
		n := e.node(t, node)
		return !nodeReady(n) && n.Annotations[PowerAnnotation] == "off"
	})
	var image string
	waitUntil(t, node+" Ready with a new boot ID", 3*time.Second, func() bool {
		n := e.node(t, node)
		image = n.Status.NodeInfo.OSImage
		return nodeReady(n) && n.Annotations[PowerAnnotation] == "" && n.Status.NodeInfo.BootID != bootBefore
	})
	return image
}

// An accepted upgrade answers like Talos, keeps the machine up while the installer runs, then
// reboots it into the new version: Version and the Node's osImage follow, with a new boot ID.
func TestUpgradeRebootsIntoTheNewVersion(t *testing.T) {
	e := startEnv(t)
	if got := e.node(t, "worker-1").Status.NodeInfo.OSImage; got != "Talos (v1.13.9)" {
		t.Fatalf("osImage at start %q: the Node shows the version the machine runs", got)
	}
	conn := dial(t, e.addr(21), clientTLS(t, e.tcs["plant-a"]))
	bootBefore := e.node(t, "worker-1").Status.NodeInfo.BootID
	res, err := machine.NewMachineServiceClient(conn).Upgrade(ctx5(t), &machine.UpgradeRequest{Image: installerV114, Preserve: true})
	if err != nil {
		t.Fatal(err)
	}
	msg := res.GetMessages()[0]
	if msg.GetAck() != "Upgrade request received" || msg.GetActorId() == "" {
		t.Fatalf("response %v", res)
	}
	// The installer runs: the machine still answers, on the old version.
	if v, err := versionOf(t, conn); err != nil || v != TalosVersion {
		t.Fatalf("during the install: %q %v", v, err)
	}
	if s := e.emu.Find("worker-1").Snapshot(); s.State != StateUpgrading {
		t.Fatalf("state %q, want upgrading", s.State)
	}
	if got := e.waitReboot(t, "worker-1", bootBefore); got != "Talos (v1.14.0)" {
		t.Fatalf("osImage after the upgrade %q", got)
	}
	waitUntil(t, "Version v1.14.0", 3*time.Second, func() bool {
		v, err := versionOf(t, conn)
		return err == nil && v == "v1.14.0"
	})
	h := e.upgrades(t, "worker-1")
	if h.Count != 1 || h.Version != "v1.14.0" || len(h.Images) != 1 || h.Images[0] != installerV114 {
		t.Fatalf("history %+v", h)
	}
	r := h.Requests[0]
	if r.Result != UpgradeInstalled || r.From != "v1.13.9" || r.To != "v1.14.0" || !r.Preserve || r.Stage || r.Force {
		t.Fatalf("record %+v", r)
	}
	s := e.emu.Find("worker-1").Snapshot()
	if s.Counts["upgrade"] != 1 || s.Counts["reboot"] != 0 || s.Version != "v1.14.0" {
		t.Fatalf("snapshot %+v", s)
	}
}

// An image the control API marks as failing reboots the machine and brings it back on the
// version it ran (Talos rolls a failed upgrade back); a failing tag from the list does the same.
func TestFailingUpgradeRollsBack(t *testing.T) {
	e := startEnv(t)
	e.control(t, "POST", "/upgrade/failing", `{"image":"`+installerV114+`"}`)
	e.control(t, "PUT", "/upgrade", `{"delayMs": 100, "failing": ["`+installerV114+`", "v1.15.0"]}`)
	conn := dial(t, e.addr(21), clientTLS(t, e.tcs["plant-a"]))
	for i, image := range []string{installerV114, installerV115} {
		bootBefore := e.node(t, "worker-1").Status.NodeInfo.BootID
		if _, err := machine.NewMachineServiceClient(conn).Upgrade(ctx5(t), &machine.UpgradeRequest{Image: image}); err != nil {
			t.Fatal(err)
		}
		if got := e.waitReboot(t, "worker-1", bootBefore); got != "Talos (v1.13.9)" {
			t.Fatalf("%s: osImage after a failed upgrade %q", image, got)
		}
		waitUntil(t, "answers on the old version", 3*time.Second, func() bool {
			v, err := versionOf(t, conn)
			return err == nil && v == TalosVersion
		})
		h := e.upgrades(t, "worker-1")
		if h.Count != i+1 || h.Requests[i].Result != UpgradeRolledBack || h.Requests[i].To != TalosVersion || h.Version != TalosVersion {
			t.Fatalf("%s: history %+v", image, h)
		}
	}
}

// Maintenance mode has no Upgrade (as for Reboot); an unparseable image is InvalidArgument and
// changes nothing; a second request while the installer runs is refused. Every call counts.
func TestUpgradeRefusals(t *testing.T) {
	e := startEnv(t)
	maint := dial(t, e.addr(31), clientTLS(t, ""))
	if _, err := machine.NewMachineServiceClient(maint).Upgrade(ctx5(t), &machine.UpgradeRequest{Image: installerV114}); status.Code(err) != codes.Unimplemented {
		t.Fatalf("upgrade in maintenance mode: %v", err)
	}
	conn := dial(t, e.addr(21), clientTLS(t, e.tcs["plant-a"]))
	for _, bad := range []string{"", "ghcr.io/siderolabs/installer", "ghcr.io/SideroLabs/installer:v1.14.0", "ghcr.io/siderolabs/installer:v1.14.0 ", "ghcr.io/siderolabs/installer:v1:14"} {
		_, err := machine.NewMachineServiceClient(conn).Upgrade(ctx5(t), &machine.UpgradeRequest{Image: bad})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "installer image") {
			t.Fatalf("image %q: %v", bad, err)
		}
	}
	s := e.emu.Find("worker-1").Snapshot()
	if s.State != StateRunning || s.Version != TalosVersion || s.Counts["upgrade"] != 5 {
		t.Fatalf("after refused images: %+v", s)
	}
	e.control(t, "PUT", "/upgrade", `{"delayMs": 2000}`)
	if _, err := machine.NewMachineServiceClient(conn).Upgrade(ctx5(t), &machine.UpgradeRequest{Image: installerV114}); err != nil {
		t.Fatal(err)
	}
	_, err := machine.NewMachineServiceClient(conn).Upgrade(ctx5(t), &machine.UpgradeRequest{Image: installerV115})
	if status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("second upgrade while installing: %v", err)
	}
	h := e.upgrades(t, "worker-1")
	if h.Count != 7 || h.Requests[5].Result != UpgradePending || h.Requests[6].Result != UpgradeRefused || h.Requests[0].Result != UpgradeRefused {
		t.Fatalf("history %+v", h)
	}
	// The maintenance machine got none: it answered before reaching the machine's upgrade.
	if got := e.upgrades(t, "spare-31").Count; got != 0 {
		t.Fatalf("maintenance machine recorded %d", got)
	}
}

// A staged upgrade reboots as Talos does (stage keeps the image and reboots at once; the
// install runs early in the next boot): after the same delay, on the new version, with no
// other reboot asked for. A failing image staged rolls back the same way.
func TestStagedUpgradeRebootsIntoTheNewVersion(t *testing.T) {
	e := startEnv(t)
	e.control(t, "PUT", "/upgrade", `{"delayMs": 200, "failing": ["v1.15.0"]}`)
	conn := dial(t, e.addr(12), clientTLS(t, e.tcs["plant-a"]))
	if _, err := machine.NewMachineServiceClient(conn).Upgrade(ctx5(t), &machine.UpgradeRequest{Image: installerV114, Stage: true}); err != nil {
		t.Fatal(err)
	}
	if h := e.upgrades(t, "cp-2"); h.Staged != "v1.14.0" || h.Version != TalosVersion || h.Requests[0].Result != UpgradeStaged {
		t.Fatalf("history while staged %+v", h)
	}
	if s := e.emu.Find("cp-2").Snapshot(); s.State != StateUpgrading {
		t.Fatalf("state %q, want upgrading until the reboot", s.State)
	}
	if got := e.waitReboot(t, "cp-2", "boot-0"); got != "Talos (v1.14.0)" {
		t.Fatalf("osImage %q", got)
	}
	waitUntil(t, "Version v1.14.0", 3*time.Second, func() bool {
		v, err := versionOf(t, conn)
		return err == nil && v == "v1.14.0"
	})
	h := e.upgrades(t, "cp-2")
	if h.Staged != "" || h.Version != "v1.14.0" || h.Count != 1 || h.Requests[0].Result != UpgradeInstalled || !h.Requests[0].Stage || h.Requests[0].To != "v1.14.0" {
		t.Fatalf("history after the reboot %+v", h)
	}
	if s := e.emu.Find("cp-2").Snapshot(); s.Counts["reboot"] != 0 || s.Counts["upgrade"] != 1 {
		t.Fatalf("the staged upgrade needed another verb: %+v", s.Counts)
	}

	bootBefore := e.node(t, "cp-2").Status.NodeInfo.BootID
	if _, err := machine.NewMachineServiceClient(conn).Upgrade(ctx5(t), &machine.UpgradeRequest{Image: installerV115, Stage: true}); err != nil {
		t.Fatal(err)
	}
	if got := e.waitReboot(t, "cp-2", bootBefore); got != "Talos (v1.14.0)" {
		t.Fatalf("osImage after a failed staged upgrade %q", got)
	}
	if h := e.upgrades(t, "cp-2"); h.Requests[1].Result != UpgradeRolledBack || h.Requests[1].To != "v1.14.0" || h.Version != "v1.14.0" || h.Staged != "" {
		t.Fatalf("history after the rollback %+v", h)
	}
}

// Version can be made to answer another version than the one the machine runs (and its Node's
// osImage shows), across an upgrade's reboot, until cleared.
func TestReportedVersionDiffersFromTheNode(t *testing.T) {
	e := startEnv(t)
	e.control(t, "PUT", "/upgrade", `{"delayMs": 0}`)
	e.control(t, "PUT", "/machines/worker-1/reported-version", `{"version":"v1.13.9"}`)
	conn := dial(t, e.addr(21), clientTLS(t, e.tcs["plant-a"]))
	bootBefore := e.node(t, "worker-1").Status.NodeInfo.BootID
	if _, err := machine.NewMachineServiceClient(conn).Upgrade(ctx5(t), &machine.UpgradeRequest{Image: installerV114}); err != nil {
		t.Fatal(err)
	}
	if got := e.waitReboot(t, "worker-1", bootBefore); got != "Talos (v1.14.0)" {
		t.Fatalf("osImage %q", got)
	}
	waitUntil(t, "answering again", 3*time.Second, func() bool {
		_, err := versionOf(t, conn)
		return err == nil
	})
	if v, _ := versionOf(t, conn); v != "v1.13.9" {
		t.Fatalf("Version %q, want the reported v1.13.9", v)
	}
	if h := e.upgrades(t, "worker-1"); h.Version != "v1.14.0" || h.Reported != "v1.13.9" {
		t.Fatalf("history %+v", h)
	}
	e.control(t, "PUT", "/machines/worker-1/reported-version", `{"version":""}`)
	if v, err := versionOf(t, conn); err != nil || v != "v1.14.0" {
		t.Fatalf("Version after clearing %q %v", v, err)
	}
	req, _ := http.NewRequest("PUT", e.ctrl.URL+"/machines/worker-1/reported-version", strings.NewReader(`{"version":"v1 14"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("a bad version: %d", resp.StatusCode)
	}
}

// A machine's version can be set (a node already at the target), and a fixture entry can
// start a machine on another version.
func TestVersionSetAndFromTheFixture(t *testing.T) {
	e := startEnv(t)
	e.control(t, "POST", "/machines/cp-1/version", `{"version":"v1.14.0"}`)
	if got := e.node(t, "cp-1").Status.NodeInfo.OSImage; got != "Talos (v1.14.0)" {
		t.Fatalf("osImage %q", got)
	}
	conn := dial(t, e.addr(11), clientTLS(t, e.tcs["plant-a"]))
	if v, err := versionOf(t, conn); err != nil || v != "v1.14.0" {
		t.Fatalf("version %q %v", v, err)
	}

	path := filepath.Join(t.TempDir(), "fx.yaml")
	fx := "cluster: plant-a\nnodes:\n  - {name: w-1, machine: {host: 21, uuid: \"11111111-0000-4000-8000-000000000021\", talosVersion: v1.14.0}}\n" +
		"  - {name: w-2, machine: {host: 22, uuid: \"11111111-0000-4000-8000-000000000022\"}}\n"
	if err := os.WriteFile(path, []byte(fx), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := loadFixture(path)
	if err != nil {
		t.Fatal(err)
	}
	emu, err := NewEmulator(f, testNet(), 50000, noNodeLink{}, DefaultTiming)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := emu.Find("w-1").Snapshot().Version, emu.Find("w-2").Snapshot().Version; a != "v1.14.0" || b != TalosVersion {
		t.Fatalf("versions %q %q", a, b)
	}
}

func TestParseInstallerImage(t *testing.T) {
	for ref, want := range map[string]string{
		installerV114:       "v1.14.0",
		installerV115:       "v1.15.0",
		"installer:v1.14.0": "v1.14.0",
		"registry.local:5000/siderolabs/installer:v1.14.0-beta.1":                 "v1.14.0-beta.1",
		"ghcr.io/siderolabs/installer:v1.14.0@sha256:" + strings.Repeat("ab", 32): "v1.14.0",
	} {
		got, err := parseInstallerImage(ref)
		if err != nil || got != want {
			t.Errorf("%s: %q %v", ref, got, err)
		}
	}
	for _, bad := range []string{"", "ghcr.io/siderolabs/installer", "ghcr.io/siderolabs/installer:", "ghcr.io/siderolabs/installer:v1.14.0@sha256:xyz", "Ghcr.io//installer:v1", "https://ghcr.io/siderolabs/installer:v1.14.0"} {
		if _, err := parseInstallerImage(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

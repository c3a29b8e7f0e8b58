package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	cosiapi "github.com/cosi-project/runtime/api/v1alpha1"
	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	hwpb "github.com/siderolabs/talos/pkg/machinery/api/resource/definitions/hardware"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"
)

const testFixture = `
cluster: plant-a
nodes:
  - {name: cp-1, controlPlane: true, machine: {host: 11, uuid: "11111111-0000-4000-8000-000000000011", bmc: true}}
  - {name: cp-2, controlPlane: true, machine: {host: 12, uuid: "11111111-0000-4000-8000-000000000012"}}
  - {name: worker-1, machine: {host: 21, uuid: "11111111-0000-4000-8000-000000000021", bmc: true}}
  - {name: virt-1, virtual: true}
spares:
  - {host: 31, uuid: "11111111-0000-4000-8000-000000000031"}
foreign:
  cluster: plant-old
  machines:
    - {host: 41, uuid: "11111111-0000-4000-8000-000000000041", role: controlplane}
    - {host: 42, uuid: "11111111-0000-4000-8000-000000000042", role: worker}
`

type env struct {
	emu    *Emulator
	cs     *fake.Clientset
	dir    string
	tcs    map[string]string
	ctrl   *httptest.Server
	netIdx int
}

func testNet() int {
	if v := os.Getenv("TALOSEMU_TEST_NET"); v != "" {
		n, _ := strconv.Atoi(v)
		return n
	}
	return 187
}

func fixtureNode(name, uuid string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{KwokAnnotation: "fake"}},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			NodeInfo:   corev1.NodeSystemInfo{SystemUUID: uuid, BootID: "boot-0"},
		},
	}
}

func startEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	fxPath := filepath.Join(dir, "fixture.yaml")
	if err := os.WriteFile(fxPath, []byte(testFixture), 0o644); err != nil {
		t.Fatal(err)
	}
	fx, err := loadFixture(fxPath)
	if err != nil {
		t.Fatal(err)
	}
	cs := fake.NewClientset(
		fixtureNode("cp-1", "11111111-0000-4000-8000-000000000011"),
		fixtureNode("cp-2", "11111111-0000-4000-8000-000000000012"),
		fixtureNode("worker-1", "11111111-0000-4000-8000-000000000021"),
	)
	timing := Timing{RebootDown: 600 * time.Millisecond, ResetDown: 500 * time.Millisecond, ApplyDown: 300 * time.Millisecond, UpgradeDelay: 800 * time.Millisecond}
	emu, err := NewEmulator(fx, testNet(), 50000, &kubeNodeLink{cs: cs}, timing)
	if err != nil {
		t.Fatal(err)
	}
	if err := emu.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emu.Stop)
	tcs, err := emu.WriteTalosconfigs(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctrl := httptest.NewServer(emu.ControlHandler())
	t.Cleanup(ctrl.Close)
	return &env{emu: emu, cs: cs, dir: dir, tcs: tcs, ctrl: ctrl, netIdx: testNet()}
}

// clientTLS builds client credentials from a talosconfig (nil path: no client certificate,
// server not verified, as `talosctl --insecure` does in maintenance mode).
func clientTLS(t *testing.T, talosconfig string) *tls.Config {
	t.Helper()
	if talosconfig == "" {
		return &tls.Config{InsecureSkipVerify: true} //nolint:gosec
	}
	data, err := os.ReadFile(talosconfig)
	if err != nil {
		t.Fatal(err)
	}
	var tc Talosconfig
	if err := yaml.Unmarshal(data, &tc); err != nil {
		t.Fatal(err)
	}
	ctx := tc.Contexts[tc.Context]
	dec := func(s string) []byte {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	keyPEM := dec(ctx.Key)
	if !strings.Contains(string(keyPEM), "-----BEGIN ED25519 PRIVATE KEY-----") {
		t.Fatalf("talosconfig key is not labelled ED25519 PRIVATE KEY: %s", keyPEM[:40])
	}
	cert, err := LoadTalosKeyPair(dec(ctx.Crt), keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(dec(ctx.CA))
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool}
}

func dial(t *testing.T, addr string, cfg *tls.Config) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr+":50000", grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func ctx5(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func waitUntil(t *testing.T, what string, timeout time.Duration, fn func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !fn() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (e *env) node(t *testing.T, name string) *corev1.Node {
	n, err := e.cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (e *env) addr(host int) string { return machineAddress(e.netIdx, host) }

func TestMaintenanceVersionAndSystemInformation(t *testing.T) {
	e := startEnv(t)
	conn := dial(t, e.addr(31), clientTLS(t, ""))
	v, err := machine.NewMachineServiceClient(conn).Version(ctx5(t), &emptypb.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	if got := v.GetMessages()[0].GetVersion().GetTag(); got != TalosVersion {
		t.Fatalf("tag %q", got)
	}
	res, err := cosiapi.NewStateClient(conn).Get(ctx5(t), &cosiapi.GetRequest{
		Namespace: "hardware", Type: "SystemInformations.hardware.talos.dev", Id: "systeminformation",
	})
	if err != nil {
		t.Fatal(err)
	}
	var spec hwpb.SystemInformationSpec
	if err := proto.Unmarshal(res.GetResource().GetSpec().GetProtoSpec(), &spec); err != nil {
		t.Fatal(err)
	}
	if spec.GetUuid() != "11111111-0000-4000-8000-000000000031" {
		t.Fatalf("uuid %q", spec.GetUuid())
	}
	if !strings.Contains(res.GetResource().GetSpec().GetYamlSpec(), "uuid: 11111111-0000-4000-8000-000000000031") {
		t.Fatalf("yaml spec %q", res.GetResource().GetSpec().GetYamlSpec())
	}
	// Power verbs are not offered in maintenance mode.
	if _, err := machine.NewMachineServiceClient(conn).Reboot(ctx5(t), &machine.RebootRequest{}); status.Code(err) != codes.Unimplemented {
		t.Fatalf("reboot in maintenance: %v", err)
	}
}

func TestConfiguredRequiresClientCert(t *testing.T) {
	e := startEnv(t)
	// With plant-a's talosconfig: mTLS works.
	conn := dial(t, e.addr(11), clientTLS(t, e.tcs["plant-a"]))
	if _, err := machine.NewMachineServiceClient(conn).Version(ctx5(t), &emptypb.Empty{}); err != nil {
		t.Fatal(err)
	}
	// Without a client certificate: UNAVAILABLE "certificate required".
	bare := dial(t, e.addr(11), clientTLS(t, ""))
	_, err := machine.NewMachineServiceClient(bare).Version(ctx5(t), &emptypb.Empty{})
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "certificate required") {
		t.Fatalf("want Unavailable certificate required, got %v", err)
	}
	// A foreign machine's server certificate is not accepted by plant-a's CA.
	foreign := dial(t, e.addr(41), clientTLS(t, e.tcs["plant-a"]))
	_, err = machine.NewMachineServiceClient(foreign).Version(ctx5(t), &emptypb.Empty{})
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("want a certificate error against plant-old, got %v", err)
	}
	// plant-old's own talosconfig works there.
	own := dial(t, e.addr(41), clientTLS(t, e.tcs["plant-old"]))
	if _, err := machine.NewMachineServiceClient(own).Version(ctx5(t), &emptypb.Empty{}); err != nil {
		t.Fatal(err)
	}
}

func TestEtcdMemberList(t *testing.T) {
	e := startEnv(t)
	conn := dial(t, e.addr(12), clientTLS(t, e.tcs["plant-a"]))
	res, err := machine.NewMachineServiceClient(conn).EtcdMemberList(ctx5(t), &machine.EtcdMemberListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range res.GetMessages()[0].GetMembers() {
		names = append(names, m.GetHostname())
	}
	if strings.Join(names, ",") != "cp-1,cp-2" {
		t.Fatalf("members %v", names)
	}
	old := dial(t, e.addr(41), clientTLS(t, e.tcs["plant-old"]))
	res, err = machine.NewMachineServiceClient(old).EtcdMemberList(ctx5(t), &machine.EtcdMemberListRequest{})
	if err != nil || len(res.GetMessages()[0].GetMembers()) != 1 {
		t.Fatalf("plant-old members: %v %v", res, err)
	}
	// Proxying through an endpoint with the "node" metadata, as talosctl -n does.
	pctx := metadata.AppendToOutgoingContext(ctx5(t), "node", e.addr(21))
	v, err := machine.NewMachineServiceClient(conn).Version(pctx, &emptypb.Empty{})
	if err != nil || v.GetMessages()[0].GetMetadata().GetHostname() != e.addr(21) {
		t.Fatalf("proxied version: %v %v", v, err)
	}
}

func readBootID(t *testing.T, conn *grpc.ClientConn) (string, error) {
	t.Helper()
	stream, err := machine.NewMachineServiceClient(conn).Read(ctx5(t), &machine.ReadRequest{Path: BootIDPath})
	if err != nil {
		return "", err
	}
	var out []byte
	for {
		chunk, err := stream.Recv()
		if err == io.EOF {
			return strings.TrimSpace(string(out)), nil
		}
		if err != nil {
			return "", err
		}
		out = append(out, chunk.GetBytes()...)
	}
}

func TestReadServesTheBootIDOnly(t *testing.T) {
	e := startEnv(t)
	conn := dial(t, e.addr(21), clientTLS(t, e.tcs["plant-a"]))
	before, err := readBootID(t, conn)
	if err != nil || before == "" {
		t.Fatalf("boot id %q %v", before, err)
	}
	if want := e.emu.Find("worker-1").Snapshot().BootID; before != want {
		t.Fatalf("read %q, machine has %q", before, want)
	}
	stream, err := machine.NewMachineServiceClient(conn).Read(ctx5(t), &machine.ReadRequest{Path: "/etc/shadow"})
	if err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.NotFound {
		t.Fatalf("other path: %v", err)
	}
	if _, err := machine.NewMachineServiceClient(conn).Reboot(ctx5(t), &machine.RebootRequest{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "a new boot ID after the reboot", 5*time.Second, func() bool {
		after, err := readBootID(t, conn)
		return err == nil && after != "" && after != before
	})
}

func TestRebootFlipsNodeAndBootID(t *testing.T) {
	e := startEnv(t)
	conn := dial(t, e.addr(21), clientTLS(t, e.tcs["plant-a"]))
	res, err := machine.NewMachineServiceClient(conn).Reboot(ctx5(t), &machine.RebootRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res.GetMessages()[0].GetActorId() == "" {
		t.Fatal("no actor id")
	}
	waitUntil(t, "NotReady", 2*time.Second, func() bool {
		n := e.node(t, "worker-1")
		return !nodeReady(n) && n.Annotations[PowerAnnotation] == "off"
	})
	waitUntil(t, "Ready with a new boot ID", 3*time.Second, func() bool {
		n := e.node(t, "worker-1")
		return nodeReady(n) && n.Annotations[PowerAnnotation] == "" && n.Status.NodeInfo.BootID != "boot-0" && n.Status.NodeInfo.BootID != ""
	})
	if got := e.node(t, "worker-1").Status.NodeInfo.SystemUUID; got != "11111111-0000-4000-8000-000000000021" {
		t.Fatalf("systemUUID changed: %q", got)
	}
	m := e.emu.Find("worker-1").Snapshot()
	if m.Counts["reboot"] != 1 || !m.Powered || m.State != StateRunning {
		t.Fatalf("snapshot %+v", m)
	}
	// And it answers again.
	waitUntil(t, "answers after reboot", 3*time.Second, func() bool {
		_, err := machine.NewMachineServiceClient(conn).Version(ctx5(t), &emptypb.Empty{})
		return err == nil
	})
}

func TestShutdownThenPowerOnViaControlAPI(t *testing.T) {
	e := startEnv(t)
	conn := dial(t, e.addr(11), clientTLS(t, e.tcs["plant-a"]))
	if _, err := machine.NewMachineServiceClient(conn).Shutdown(ctx5(t), &machine.ShutdownRequest{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "NotReady", 2*time.Second, func() bool { return !nodeReady(e.node(t, "cp-1")) })
	time.Sleep(800 * time.Millisecond)
	if n := e.node(t, "cp-1"); nodeReady(n) || n.Annotations[PowerAnnotation] != "off" {
		t.Fatal("shut-down node came back by itself")
	}
	if _, err := machine.NewMachineServiceClient(conn).Version(ctx5(t), &emptypb.Empty{}); status.Code(err) != codes.Unavailable {
		t.Fatalf("powered-off machine answered: %v", err)
	}
	resp, err := http.Post(e.ctrl.URL+"/machines/cp-1/power", "application/json", strings.NewReader(`{"state":"on"}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("power on: %v %v", resp, err)
	}
	resp.Body.Close()
	waitUntil(t, "Ready again", 3*time.Second, func() bool {
		n := e.node(t, "cp-1")
		return nodeReady(n) && n.Annotations[PowerAnnotation] == ""
	})
	resp, err = http.Get(e.ctrl.URL + "/machines")
	if err != nil {
		t.Fatal(err)
	}
	var list []Snapshot
	_ = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	for _, s := range list {
		if s.Name == "cp-1" && (s.Counts["shutdown"] != 1 || s.Counts["powerOn"] != 1 || !s.Powered) {
			t.Fatalf("cp-1 %+v", s)
		}
	}
}

func TestResetForeignThenJoin(t *testing.T) {
	e := startEnv(t)
	// Move the machine to a new address on reset (DHCP hands out another lease).
	resp, err := http.Post(e.ctrl.URL+"/machines/11111111-0000-4000-8000-000000000042/reset-address", "application/json", strings.NewReader(`{"host":52}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("reset-address: %v %v", resp, err)
	}
	resp.Body.Close()
	old := dial(t, e.addr(42), clientTLS(t, e.tcs["plant-old"]))
	if _, err := machine.NewMachineServiceClient(old).Reset(ctx5(t), &machine.ResetRequest{Graceful: true, Reboot: true}); err != nil {
		t.Fatal(err)
	}
	maint := dial(t, e.addr(52), clientTLS(t, ""))
	waitUntil(t, "maintenance mode at the new address", 3*time.Second, func() bool {
		_, err := machine.NewMachineServiceClient(maint).Version(ctx5(t), &emptypb.Empty{})
		return err == nil
	})
	cfg := "version: v1alpha1\nmachine:\n  type: worker\n  network:\n    hostname: worker-7\ncluster:\n  clusterName: plant-a\n"
	ar, err := machine.NewMachineServiceClient(maint).ApplyConfiguration(ctx5(t), &machine.ApplyConfigurationRequest{
		Data: []byte(cfg), Mode: machine.ApplyConfigurationRequest_AUTO,
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = ar
	waitUntil(t, "Node worker-7", 3*time.Second, func() bool {
		n, err := e.cs.CoreV1().Nodes().Get(context.Background(), "worker-7", metav1.GetOptions{})
		return err == nil && nodeReady(n) && n.Status.NodeInfo.SystemUUID == "11111111-0000-4000-8000-000000000042" &&
			n.Annotations[KwokAnnotation] == "fake" && n.Status.NodeInfo.BootID != ""
	})
	member := dial(t, e.addr(52), clientTLS(t, e.tcs["plant-a"]))
	waitUntil(t, "plant-a member over mTLS", 3*time.Second, func() bool {
		_, err := machine.NewMachineServiceClient(member).Version(ctx5(t), &emptypb.Empty{})
		return err == nil
	})
	s := e.emu.Find("11111111-0000-4000-8000-000000000042").Snapshot()
	if s.Cluster != "plant-a" || s.Mode != ModeConfigured || s.Counts["reset"] != 1 || s.Counts["apply"] != 1 {
		t.Fatalf("snapshot %+v", s)
	}
}

// A client whose TLS handshake is still under way when the machine goes down (the operator
// probing it right after its Reset, on a loaded machine) must not hold the machine down: the
// gRPC server's Stop waits for handshakes in flight, and it was called under the machine's
// lock, which the handshake itself takes to choose its TLS config. The machine then never
// came back (CI: a reclaim's machine not back in maintenance mode within 25 s).
func TestResetWithAHandshakeInFlightComesBack(t *testing.T) {
	e := startEnv(t)
	// Connected, ClientHello not sent yet: the server's handshake waits on this socket.
	raw, err := net.DialTimeout("tcp", e.addr(42)+":50000", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	old := dial(t, e.addr(42), clientTLS(t, e.tcs["plant-old"]))
	if _, err := machine.NewMachineServiceClient(old).Reset(ctx5(t), &machine.ResetRequest{Graceful: true, Reboot: true}); err != nil {
		t.Fatal(err)
	}
	// The ClientHello arrives while the machine is going down.
	time.Sleep(150 * time.Millisecond)
	hello := tls.Client(raw, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec
	_ = hello.SetDeadline(time.Now().Add(time.Second))
	_ = hello.Handshake()
	maint := dial(t, e.addr(42), clientTLS(t, ""))
	waitUntil(t, "maintenance mode after the reset", 3*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		_, err := machine.NewMachineServiceClient(maint).Version(ctx, &emptypb.Empty{})
		return err == nil
	})
}

func TestSpareJoinsWithDefaultName(t *testing.T) {
	e := startEnv(t)
	conn := dial(t, e.addr(31), clientTLS(t, ""))
	_, err := machine.NewMachineServiceClient(conn).ApplyConfiguration(ctx5(t), &machine.ApplyConfigurationRequest{
		Data: []byte("version: v1alpha1\nmachine:\n  type: controlplane\n"), Mode: machine.ApplyConfigurationRequest_AUTO,
	})
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "Node talos-11111111", 3*time.Second, func() bool {
		n, err := e.cs.CoreV1().Nodes().Get(context.Background(), "talos-11111111", metav1.GetOptions{})
		return err == nil && n.Labels["node-role.kubernetes.io/control-plane"] == "" && nodeReady(n)
	})
}

func TestParseAppliedConfig(t *testing.T) {
	emu := &Emulator{Target: "plant-a", Clusters: map[string]*Cluster{}}
	for _, n := range []string{"plant-a", "plant-old"} {
		ca, _ := NewCA(n)
		emu.Clusters[n] = &Cluster{Name: n, CA: ca}
	}
	crt := base64.StdEncoding.EncodeToString(emu.Clusters["plant-old"].CA.CertPEM)
	cfg := "version: v1alpha1\nmachine:\n  type: controlplane\n  ca:\n    crt: " + crt + "\n---\napiVersion: v1alpha1\nkind: HostnameConfig\nhostname: cp-9\n"
	got, err := parseAppliedConfig([]byte(cfg), emu)
	if err != nil {
		t.Fatal(err)
	}
	if got.Cluster != "plant-old" || got.Role != "controlplane" || got.Hostname != "cp-9" {
		t.Fatalf("%+v", got)
	}
}

// A power-on that lands between a NotReady re-assertion's read and its write is not undone:
// the Node ends Ready (seen as "cp-2 Ready again" timing out in operator rack tests).
func TestPowerOnIsNotUndoneByAReassertion(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(fixtureNode("worker-1", "11111111-0000-4000-8000-000000000021"))
	k := &kubeNodeLink{cs: cs, reassert: []time.Duration{10 * time.Millisecond}}
	poweredOn := make(chan struct{})
	k.beforeReassertWrite = func(node string) {
		go func() {
			k.PowerOn(ctx, node, "boot-1", osImage(TalosVersion))
			close(poweredOn)
		}()
		// Give the power-on every chance to run before the re-assertion writes.
		time.Sleep(100 * time.Millisecond)
	}
	k.PowerOff(ctx, "worker-1", "PoweredOff")
	// A heartbeat in flight flips the powered-off Node back to Ready: the re-assertion reads it.
	if err := k.patchStatus(ctx, "worker-1", map[string]any{"conditions": []any{readyCondition(true, "KubeletReady", "heartbeat")}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-poweredOn:
	case <-time.After(5 * time.Second):
		t.Fatal("the power-on never finished")
	}
	n, err := cs.CoreV1().Nodes().Get(ctx, "worker-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !nodeReady(n) || n.Annotations[PowerAnnotation] != "" {
		t.Fatalf("after power-on: Ready=%v, power annotation %q; want Ready and no annotation", nodeReady(n), n.Annotations[PowerAnnotation])
	}
}

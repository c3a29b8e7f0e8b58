package main

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/cosi-project/runtime/pkg/safe"
	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/client"
	clientconfig "github.com/siderolabs/talos/pkg/machinery/client/config"
	"github.com/siderolabs/talos/pkg/machinery/resources/hardware"
)

// The official Talos Go client (what talosctl uses) reads our talosconfig and talks to the
// emulator: Version over mTLS, the SystemInformation resource over COSI, and both in
// maintenance mode with an insecure TLS config (talosctl --insecure).
func TestOfficialClient(t *testing.T) {
	e := startEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	cfg, err := clientconfig.Open(e.tcs["plant-a"])
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(ctx, client.WithConfig(cfg), client.WithEndpoints(e.addr(12)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v, err := c.Version(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v.GetMessages()[0].GetVersion().GetTag() != TalosVersion {
		t.Fatalf("version %v", v)
	}
	si, err := safe.StateGet[*hardware.SystemInformation](ctx, c.COSI, hardware.NewSystemInformation(hardware.SystemInformationID).Metadata())
	if err != nil {
		t.Fatal(err)
	}
	if si.TypedSpec().UUID != "11111111-0000-4000-8000-000000000012" {
		t.Fatalf("uuid %q", si.TypedSpec().UUID)
	}
	// One-to-many through an endpoint, as `talosctl -e cp-1 -n worker-1 version` does.
	v, err = c.Version(client.WithNode(ctx, e.addr(21)))
	if err != nil || v.GetMessages()[0].GetMetadata().GetHostname() != e.addr(21) {
		t.Fatalf("proxied version: %v %v", v, err)
	}

	m, err := client.New(ctx, client.WithTLSConfig(&tls.Config{InsecureSkipVerify: true}), client.WithEndpoints(e.addr(31))) //nolint:gosec
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	si, err = safe.StateGet[*hardware.SystemInformation](ctx, m.COSI, hardware.NewSystemInformation(hardware.SystemInformationID).Metadata())
	if err != nil {
		t.Fatal(err)
	}
	if si.TypedSpec().UUID != "11111111-0000-4000-8000-000000000031" {
		t.Fatalf("uuid %q", si.TypedSpec().UUID)
	}
	// The same insecure client against a configured machine: "certificate required".
	bad, err := client.New(ctx, client.WithTLSConfig(&tls.Config{InsecureSkipVerify: true}), client.WithEndpoints(e.addr(11))) //nolint:gosec
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if _, err := bad.Version(ctx); err == nil || !strings.Contains(err.Error(), "certificate required") {
		t.Fatalf("want certificate required, got %v", err)
	}
}

// talosctl upgrade's request through the official client, proxied to a worker by the
// "node" metadata as `talosctl -e cp-2 -n worker-1 upgrade --image ...` does: the answer
// carries the worker's hostname, and the worker comes back on the image's version.
func TestOfficialClientUpgrade(t *testing.T) {
	e := startEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg, err := clientconfig.Open(e.tcs["plant-a"])
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(ctx, client.WithConfig(cfg), client.WithEndpoints(e.addr(12)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	worker := client.WithNode(ctx, e.addr(21))
	res, err := c.MachineClient.Upgrade(worker, &machine.UpgradeRequest{Image: "ghcr.io/siderolabs/installer:v1.14.0", Preserve: true})
	if err != nil {
		t.Fatal(err)
	}
	msg := res.GetMessages()[0]
	if msg.GetAck() != "Upgrade request received" || msg.GetActorId() == "" || msg.GetMetadata().GetHostname() != e.addr(21) {
		t.Fatalf("response %v", res)
	}
	waitUntil(t, "worker-1 on v1.14.0", 5*time.Second, func() bool {
		v, err := c.Version(worker)
		return err == nil && v.GetMessages()[0].GetVersion().GetTag() == "v1.14.0" &&
			e.node(t, "worker-1").Status.NodeInfo.OSImage == "Talos (v1.14.0)"
	})
	if v, err := c.Version(ctx); err != nil || v.GetMessages()[0].GetVersion().GetTag() != TalosVersion {
		t.Fatalf("the endpoint itself was upgraded: %v %v", v, err)
	}
}

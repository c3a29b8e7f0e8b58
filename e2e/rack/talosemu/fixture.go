package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// Fixture is the part of e2e/rack/fixture/plant-a.yaml that the emulator reads
// (unknown keys are ignored, JSON or YAML).
type Fixture struct {
	Cluster string         `json:"cluster"`
	Nodes   []FixtureNode  `json:"nodes"`
	Spares  []FixtureSpare `json:"spares"`
	Foreign *struct {
		Cluster  string           `json:"cluster"`
		Machines []FixtureForeign `json:"machines"`
	} `json:"foreign"`
}

// FixtureNode is a Kubernetes node of the target cluster, backed by a machine unless virtual.
type FixtureNode struct {
	Name         string          `json:"name"`
	ControlPlane bool            `json:"controlPlane"`
	Virtual      bool            `json:"virtual"`
	Machine      *FixtureMachine `json:"machine"`
}

// FixtureMachine is the hardware behind a fixture node.
type FixtureMachine struct {
	Host int    `json:"host"`
	UUID string `json:"uuid"`
	BMC  bool   `json:"bmc"`
	// TalosVersion is the version the machine runs at start (default TalosVersion), so a rack
	// can hold a node already at an upgrade's target.
	TalosVersion string `json:"talosVersion"`
}

// FixtureSpare is a machine waiting in maintenance mode.
type FixtureSpare struct {
	Host int    `json:"host"`
	UUID string `json:"uuid"`
	BMC  bool   `json:"bmc"`
	Name string `json:"name"`
}

// FixtureForeign is a machine configured by the foreign cluster.
type FixtureForeign struct {
	Host int    `json:"host"`
	UUID string `json:"uuid"`
	Role string `json:"role"`
	BMC  bool   `json:"bmc"`
	Name string `json:"name"`
}

func loadFixture(path string) (*Fixture, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f Fixture
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("fixture %s: %w", path, err)
	}
	if f.Cluster == "" {
		f.Cluster = "plant-a"
	}
	if f.Foreign != nil && f.Foreign.Cluster == "" {
		f.Foreign.Cluster = "plant-old"
	}
	return &f, nil
}

// machineAddress mirrors machineAddress(net, host) of e2e/rack/lib/net.mjs.
func machineAddress(netIdx, host int) string {
	return fmt.Sprintf("127.0.%d.%d", 10+netIdx, host)
}

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"runtime"
	"strings"
	"time"

	cosiapi "github.com/cosi-project/runtime/api/v1alpha1"
	"github.com/cosi-project/runtime/pkg/state/impl/inmem"
	cosiserver "github.com/cosi-project/runtime/pkg/state/protobuf/server"
	"github.com/siderolabs/talos/pkg/machinery/api/common"
	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/resources/hardware"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
	"sigs.k8s.io/yaml"
)

// TalosVersion is the version a machine runs at start (unless its fixture entry names
// another); Version reports the machine's current one.
const TalosVersion = "v1.13.9"

// cosiState is a machine's COSI resource store, served with the COSI runtime's own
// protobuf server (so resources travel exactly as a real Talos encodes them: metadata plus
// spec as proto_spec bytes and yaml_spec).
type cosiState struct {
	*cosiserver.State
}

func newCOSIState(uuid string) (*cosiState, error) {
	st := inmem.NewState(hardware.NamespaceName)
	si := hardware.NewSystemInformation(hardware.SystemInformationID)
	spec := si.TypedSpec()
	spec.Manufacturer = "Rackside"
	spec.ProductName = "Simulated Server"
	spec.Version = "1.0"
	spec.SerialNumber = strings.ToUpper(strings.ReplaceAll(uuid, "-", ""))[:12]
	spec.UUID = uuid
	spec.WakeUpType = "Power Switch"
	spec.SKUNumber = "RS-SIM-1"
	if err := st.Create(context.Background(), si); err != nil {
		return nil, err
	}
	return &cosiState{State: cosiserver.NewState(st)}, nil
}

type machineService struct {
	machine.UnimplementedMachineServiceServer
	m *Machine
}

func newGRPCServer(m *Machine) *grpc.Server {
	// A client that connects and sends nothing is dropped after 5 s rather than grpc's 120 s,
	// as the Stop of a machine going down waits for every handshake in flight.
	srv := grpc.NewServer(grpc.ConnectionTimeout(5 * time.Second))
	machine.RegisterMachineServiceServer(srv, &machineService{m: m})
	cosiapi.RegisterStateServer(srv, m.cosi)
	return srv
}

var errMaintenance = status.Error(codes.Unimplemented, "API is not implemented in maintenance mode")

// target resolves the machine a call is for: the one that answered, or the one named by
// the "node"/"nodes" metadata (proxying among configured members of the same cluster, as
// apid does). The metadata is returned so responses carry the hostname when proxied.
func (s *machineService) target(ctx context.Context) (*Machine, *common.Metadata, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	var want string
	if v := md.Get("node"); len(v) > 0 {
		want = v[0]
	} else if v := md.Get("nodes"); len(v) > 0 {
		want = strings.Split(v[0], ",")[0]
	}
	self := s.m
	if want == "" || want == self.Address() {
		return self, nil, nil
	}
	host := want
	if h, _, ok := strings.Cut(want, ":"); ok {
		host = h
	}
	other := self.emu.FindByAddress(host)
	self.mu.Lock()
	selfMode, selfCluster := self.Mode, self.Cluster
	self.mu.Unlock()
	if other == nil || selfMode != ModeConfigured {
		return nil, nil, status.Errorf(codes.Unavailable, "connection error: no route to %s", want)
	}
	other.mu.Lock()
	ok := other.Mode == ModeConfigured && other.Cluster == selfCluster && other.Powered && (other.State == StateRunning || other.State == StateUpgrading)
	other.mu.Unlock()
	if !ok {
		return nil, nil, status.Errorf(codes.Unavailable, "connection error: %s is not reachable", want)
	}
	return other, &common.Metadata{Hostname: want}, nil
}

func (s *machineService) configured(ctx context.Context) (*Machine, *common.Metadata, error) {
	m, md, err := s.target(ctx)
	if err != nil {
		return nil, nil, err
	}
	m.mu.Lock()
	mode := m.Mode
	m.mu.Unlock()
	if mode != ModeConfigured {
		return nil, nil, errMaintenance
	}
	return m, md, nil
}

func (s *machineService) Version(ctx context.Context, _ *emptypb.Empty) (*machine.VersionResponse, error) {
	m, md, err := s.target(ctx)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	tag := m.Version
	if m.ReportedVersion != "" {
		tag = m.ReportedVersion
	}
	m.mu.Unlock()
	return &machine.VersionResponse{Messages: []*machine.Version{{
		Metadata: md,
		Version: &machine.VersionInfo{
			Tag: tag, Sha: "rackside-emulator", Built: "", GoVersion: runtime.Version(),
			Os: "linux", Arch: "amd64",
		},
		Platform: &machine.PlatformInfo{Name: "metal", Mode: "metal"},
	}}}, nil
}

func (s *machineService) Reboot(ctx context.Context, _ *machine.RebootRequest) (*machine.RebootResponse, error) {
	m, md, err := s.configured(ctx)
	if err != nil {
		return nil, err
	}
	return &machine.RebootResponse{Messages: []*machine.Reboot{{Metadata: md, ActorId: m.Reboot()}}}, nil
}

// Upgrade installs the image's version: the machine answers at once, reboots after the
// installer's run and comes back on the new version (or the old one: see Machine.Upgrade).
// The reference is checked first; an unparseable one changes nothing.
func (s *machineService) Upgrade(ctx context.Context, req *machine.UpgradeRequest) (*machine.UpgradeResponse, error) {
	m, md, err := s.configured(ctx)
	if err != nil {
		return nil, err
	}
	version, err := parseInstallerImage(req.GetImage())
	if err != nil {
		m.RefuseUpgrade(req.GetImage(), err)
		return nil, status.Errorf(codes.InvalidArgument, "error validating installer image %q: %v", req.GetImage(), err)
	}
	actor, err := m.Upgrade(UpgradeRequest{
		Image: req.GetImage(), Version: version, Preserve: req.GetPreserve(), Stage: req.GetStage(), Force: req.GetForce(),
	})
	if err != nil {
		return nil, status.Error(codes.FailedPrecondition, err.Error())
	}
	return &machine.UpgradeResponse{Messages: []*machine.Upgrade{{
		Metadata: md, Ack: "Upgrade request received", ActorId: actor,
	}}}, nil
}

// BootIDPath is the one file Read serves: the running kernel's boot ID, which a real
// Talos serves the same way (talosctl read /proc/sys/kernel/random/boot_id).
const BootIDPath = "/proc/sys/kernel/random/boot_id"

// Read streams a file; the emulator has one, the boot ID, and knows no other.
func (s *machineService) Read(req *machine.ReadRequest, srv machine.MachineService_ReadServer) error {
	m, md, err := s.configured(srv.Context())
	if err != nil {
		return err
	}
	if req.GetPath() != BootIDPath {
		return status.Errorf(codes.NotFound, "open %s: no such file or directory", req.GetPath())
	}
	m.mu.Lock()
	bootID := m.BootID
	m.mu.Unlock()
	return srv.Send(&common.Data{Metadata: md, Bytes: []byte(bootID + "\n")})
}

func (s *machineService) Shutdown(ctx context.Context, _ *machine.ShutdownRequest) (*machine.ShutdownResponse, error) {
	m, md, err := s.configured(ctx)
	if err != nil {
		return nil, err
	}
	return &machine.ShutdownResponse{Messages: []*machine.Shutdown{{Metadata: md, ActorId: m.Shutdown()}}}, nil
}

func (s *machineService) Reset(ctx context.Context, _ *machine.ResetRequest) (*machine.ResetResponse, error) {
	m, md, err := s.configured(ctx)
	if err != nil {
		return nil, err
	}
	return &machine.ResetResponse{Messages: []*machine.Reset{{Metadata: md, ActorId: m.Reset()}}}, nil
}

func (s *machineService) EtcdMemberList(ctx context.Context, _ *machine.EtcdMemberListRequest) (*machine.EtcdMemberListResponse, error) {
	m, md, err := s.configured(ctx)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	cluster, role := m.Cluster, m.Role
	m.mu.Unlock()
	if role != "controlplane" {
		return nil, status.Error(codes.Unavailable, "etcd is not running on this node (worker)")
	}
	var members []*machine.EtcdMember
	for _, o := range m.emu.Members(cluster) {
		o.mu.Lock()
		if o.Role == "controlplane" {
			host := o.NodeName
			if host == "" {
				host = o.FixtureKey
			}
			if host == "" {
				host = "talos-" + strings.SplitN(o.UUID, "-", 2)[0]
			}
			ip := o.Address()
			members = append(members, &machine.EtcdMember{
				Id: o.EtcdID, Hostname: host,
				PeerUrls:   []string{fmt.Sprintf("https://%s:2380", ip)},
				ClientUrls: []string{fmt.Sprintf("https://%s:2379", ip)},
			})
		}
		o.mu.Unlock()
	}
	return &machine.EtcdMemberListResponse{Messages: []*machine.EtcdMembers{{Metadata: md, Members: members}}}, nil
}

func (s *machineService) ApplyConfiguration(ctx context.Context, req *machine.ApplyConfigurationRequest) (*machine.ApplyConfigurationResponse, error) {
	m, md, err := s.target(ctx)
	if err != nil {
		return nil, err
	}
	cfg, err := parseAppliedConfig(req.GetData(), m.emu)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "failed to parse config: %v", err)
	}
	m.mu.Lock()
	mode := m.Mode
	m.mu.Unlock()
	if req.GetDryRun() {
		return &machine.ApplyConfigurationResponse{Messages: []*machine.ApplyConfiguration{{
			Metadata: md, Mode: req.GetMode(), ModeDetails: "Dry run: the config would be applied",
		}}}, nil
	}
	applied := machine.ApplyConfigurationRequest_NO_REBOOT
	details := "Applied configuration without a reboot"
	if mode == ModeMaintenance {
		applied = machine.ApplyConfigurationRequest_REBOOT
		details = "Applied configuration with a reboot (install)"
	}
	m.Apply(cfg)
	return &machine.ApplyConfigurationResponse{Messages: []*machine.ApplyConfiguration{{
		Metadata: md, Mode: applied, ModeDetails: details,
	}}}, nil
}

// appliedConfig is what the emulator takes from a machine configuration.
type appliedConfig struct {
	Cluster  string
	Role     string
	Hostname string
}

type v1alpha1Doc struct {
	Kind    string `json:"kind"`
	Machine *struct {
		Type string `json:"type"`
		CA   *struct {
			Crt string `json:"crt"`
		} `json:"ca"`
		Network *struct {
			Hostname string `json:"hostname"`
		} `json:"network"`
	} `json:"machine"`
	Cluster *struct {
		ClusterName string `json:"clusterName"`
	} `json:"cluster"`
	Hostname string `json:"hostname"` // HostnameConfig document
}

// parseAppliedConfig reads the role, hostname and cluster from a (multi-document) config.
// The cluster is the one whose Talos CA is machine.ca.crt, else the one named by
// cluster.clusterName, else the rack's target cluster.
func parseAppliedConfig(data []byte, emu *Emulator) (*appliedConfig, error) {
	out := &appliedConfig{Role: "worker"}
	var clusterByName, clusterByCA string
	docs := bytes.Split(append([]byte("\n"), data...), []byte("\n---"))
	parsed := 0
	for _, d := range docs {
		if len(bytes.TrimSpace(d)) == 0 {
			continue
		}
		var doc v1alpha1Doc
		if err := yaml.Unmarshal(d, &doc); err != nil {
			return nil, err
		}
		parsed++
		if doc.Kind == "HostnameConfig" && doc.Hostname != "" {
			out.Hostname = doc.Hostname
		}
		if doc.Machine != nil {
			switch doc.Machine.Type {
			case "controlplane", "init":
				out.Role = "controlplane"
			}
			if doc.Machine.Network != nil && doc.Machine.Network.Hostname != "" && out.Hostname == "" {
				out.Hostname = doc.Machine.Network.Hostname
			}
			if doc.Machine.CA != nil && doc.Machine.CA.Crt != "" {
				if pemBytes, err := base64.StdEncoding.DecodeString(doc.Machine.CA.Crt); err == nil {
					for name, cl := range emu.Clusters {
						if bytes.Equal(bytes.TrimSpace(pemBytes), bytes.TrimSpace(cl.CA.CertPEM)) {
							clusterByCA = name
						}
					}
				}
			}
		}
		if doc.Cluster != nil && doc.Cluster.ClusterName != "" {
			if _, ok := emu.Clusters[doc.Cluster.ClusterName]; ok {
				clusterByName = doc.Cluster.ClusterName
			}
		}
	}
	if parsed == 0 {
		return nil, fmt.Errorf("empty configuration")
	}
	switch {
	case clusterByCA != "":
		out.Cluster = clusterByCA
	case clusterByName != "":
		out.Cluster = clusterByName
	default:
		out.Cluster = emu.Target
	}
	return out, nil
}

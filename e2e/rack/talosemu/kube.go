package main

import (
	"context"
	"encoding/json"
	"log"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// Annotations shared with the kwok configuration of the rack.
const (
	PowerAnnotation = "rack.rackside.dev/power" // "off": kwok leaves the Node alone
	KwokAnnotation  = "kwok.x-k8s.io/node"      // "fake": kwok manages the Node
	TalosAnnotation = "rack.rackside.dev/talos" // informational: "reset" after a Talos reset
)

// NodeSpec describes a Node created when a machine joins the target cluster.
type NodeSpec struct {
	Name         string
	UUID         string
	BootID       string
	ControlPlane bool
	Address      string
	Version      string // Talos version (osImage)
}

// NodeLink keeps Kubernetes Nodes in step with machine power.
type NodeLink interface {
	PowerOff(ctx context.Context, node, reason string)
	PowerOn(ctx context.Context, node, bootID, osImage string)
	Join(ctx context.Context, spec NodeSpec)
}

// osImageWriter is a NodeLink that can set a Node's status.nodeInfo.osImage outside a boot
// (at start, so the Node shows the version the machine runs; a version set by the control API).
type osImageWriter interface {
	SetOSImage(ctx context.Context, node, osImage string)
}

// bootIDReader is a NodeLink that can read a Node's current boot ID, so a machine starts
// with the boot ID its Node already reports (the fixture writes the Nodes first).
type bootIDReader interface {
	BootID(ctx context.Context, node string) string
}

type noNodeLink struct{}

func (noNodeLink) PowerOff(context.Context, string, string)        {}
func (noNodeLink) PowerOn(context.Context, string, string, string) {}
func (noNodeLink) Join(context.Context, NodeSpec)                  {}

// kubeNodeLink talks to the rack's kube-apiserver with client-go.
type kubeNodeLink struct {
	cs       kubernetes.Interface
	reassert []time.Duration

	// mu orders this process's power writes to Nodes. A re-assertion of NotReady reads and
	// writes under it and only while no power-on came since its power-off (epochs), so a
	// power-on between its read and its write can never be undone by it.
	mu     sync.Mutex
	epochs map[string]uint64
	// beforeReassertWrite, when set (tests), runs between a re-assertion's read and write.
	beforeReassertWrite func(node string)
}

// nextEpoch starts a new power epoch of the node; callers hold mu.
func (k *kubeNodeLink) nextEpoch(node string) uint64 {
	if k.epochs == nil {
		k.epochs = map[string]uint64{}
	}
	k.epochs[node]++
	return k.epochs[node]
}

func newKubeNodeLink(kubeconfig string, reassert []time.Duration) (*kubeNodeLink, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 50, 100
	cfg.UserAgent = "rackside-talosemu"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &kubeNodeLink{cs: cs, reassert: reassert}, nil
}

func readyCondition(ready bool, reason, message string) map[string]any {
	now := metav1.Now().UTC().Format(time.RFC3339)
	st := "False"
	if ready {
		st = "True"
	}
	return map[string]any{
		"type": "Ready", "status": st, "reason": reason, "message": message,
		"lastHeartbeatTime": now, "lastTransitionTime": now,
	}
}

// BootID is the Node's status.nodeInfo.bootID, or "" when it cannot be read.
func (k *kubeNodeLink) BootID(ctx context.Context, node string) string {
	n, err := k.cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return n.Status.NodeInfo.BootID
}

func (k *kubeNodeLink) patchMeta(ctx context.Context, node string, annotations map[string]any, labels map[string]any) error {
	meta := map[string]any{}
	if annotations != nil {
		meta["annotations"] = annotations
	}
	if labels != nil {
		meta["labels"] = labels
	}
	body, _ := json.Marshal(map[string]any{"metadata": meta})
	_, err := k.cs.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, body, metav1.PatchOptions{FieldManager: "talosemu"})
	return err
}

func (k *kubeNodeLink) patchStatus(ctx context.Context, node string, status map[string]any) error {
	body, _ := json.Marshal(map[string]any{"status": status})
	_, err := k.cs.CoreV1().Nodes().Patch(ctx, node, types.StrategicMergePatchType, body, metav1.PatchOptions{FieldManager: "talosemu"}, "status")
	return err
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (k *kubeNodeLink) PowerOff(ctx context.Context, node, reason string) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	k.mu.Lock()
	defer k.mu.Unlock()
	epoch := k.nextEpoch(node)
	ann := map[string]any{PowerAnnotation: "off"}
	if reason == "Reset" {
		ann[TalosAnnotation] = "reset"
	}
	if err := k.patchMeta(ctx, node, ann, nil); err != nil {
		log.Printf("node %s: annotate power off: %v", node, err)
		return
	}
	msg := "kubelet stopped: machine " + reason
	cond := readyCondition(false, "KubeletNotReady", msg)
	if err := k.patchStatus(ctx, node, map[string]any{"conditions": []any{cond}}); err != nil {
		log.Printf("node %s: NotReady: %v", node, err)
		return
	}
	log.Printf("node %s: NotReady (%s)", node, reason)
	// A heartbeat already in flight when the annotation landed can flip Ready back; re-assert a
	// few times (bounded: no polling while idle).
	go func() {
		for _, d := range k.reassert {
			time.Sleep(d)
			if !k.reassertNotReady(node, epoch, msg) {
				return
			}
		}
	}()
}

// reassertNotReady writes NotReady again if a heartbeat flipped the powered-off Node back
// to Ready, and answers whether to keep watching (still off, same power epoch).
func (k *kubeNodeLink) reassertNotReady(node string, epoch uint64, msg string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.epochs[node] != epoch {
		return false // powered on (or off again) since: not ours to correct any more
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := k.cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil || n.Annotations[PowerAnnotation] != "off" {
		return false
	}
	if k.beforeReassertWrite != nil {
		k.beforeReassertWrite(node)
	}
	if nodeReady(n) {
		_ = k.patchStatus(ctx, node, map[string]any{"conditions": []any{readyCondition(false, "KubeletNotReady", msg)}})
		log.Printf("node %s: re-asserted NotReady", node)
	}
	return true
}

// PowerOn marks the Node Ready with the boot's ID and the OS image it booted (the version
// changes across an upgrade's reboot, as a real node's osImage does).
func (k *kubeNodeLink) PowerOn(ctx context.Context, node, bootID, osImage string) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	k.mu.Lock()
	defer k.mu.Unlock()
	k.nextEpoch(node)
	status := map[string]any{
		"conditions": []any{readyCondition(true, "KubeletReady", "kubelet is posting ready status")},
		"nodeInfo":   map[string]any{"bootID": bootID},
	}
	if osImage != "" {
		status["nodeInfo"].(map[string]any)["osImage"] = osImage
	}
	if err := k.patchStatus(ctx, node, status); err != nil {
		log.Printf("node %s: Ready: %v", node, err)
	}
	if err := k.patchMeta(ctx, node, map[string]any{PowerAnnotation: nil, TalosAnnotation: nil}, nil); err != nil {
		log.Printf("node %s: remove power annotation: %v", node, err)
		return
	}
	log.Printf("node %s: Ready (bootID %s)", node, bootID)
}

// SetOSImage writes the Node's status.nodeInfo.osImage.
func (k *kubeNodeLink) SetOSImage(ctx context.Context, node, osImage string) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := k.patchStatus(ctx, node, map[string]any{"nodeInfo": map[string]any{"osImage": osImage}}); err != nil {
		log.Printf("node %s: osImage: %v", node, err)
	}
}

func (k *kubeNodeLink) Join(ctx context.Context, spec NodeSpec) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	labels := map[string]string{
		"kubernetes.io/hostname": spec.Name,
		"kubernetes.io/os":       "linux",
		"kubernetes.io/arch":     "amd64",
		"type":                   "kwok",
	}
	var taints []corev1.Taint
	if spec.ControlPlane {
		labels["node-role.kubernetes.io/control-plane"] = ""
		taints = append(taints, corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule})
	}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        spec.Name,
			Labels:      labels,
			Annotations: map[string]string{KwokAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"},
		},
		Spec: corev1.NodeSpec{Taints: taints},
	}
	_, err := k.cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{FieldManager: "talosemu"})
	if apierrors.IsAlreadyExists(err) {
		lbl := map[string]any{}
		for k, v := range labels {
			lbl[k] = v
		}
		err = k.patchMeta(ctx, spec.Name, map[string]any{KwokAnnotation: "fake", PowerAnnotation: nil, TalosAnnotation: nil}, lbl)
	}
	if err != nil {
		log.Printf("node %s: create: %v", spec.Name, err)
		return
	}
	status := map[string]any{
		"conditions": []any{readyCondition(true, "KubeletReady", "kubelet is posting ready status")},
		"nodeInfo": map[string]any{
			"systemUUID": spec.UUID, "bootID": spec.BootID, "machineID": spec.UUID,
			"osImage": osImage(spec.Version), "operatingSystem": "linux", "architecture": "amd64",
			"kernelVersion": "6.18.0-talos", "containerRuntimeVersion": "containerd://2.1.5",
			"kubeletVersion": "v1.36.3", "kubeProxyVersion": "",
		},
		"addresses": []any{
			map[string]any{"type": "InternalIP", "address": spec.Address},
			map[string]any{"type": "Hostname", "address": spec.Name},
		},
	}
	if err := k.patchStatus(ctx, spec.Name, status); err != nil {
		log.Printf("node %s: status: %v", spec.Name, err)
		return
	}
	log.Printf("node %s: joined (uuid %s)", spec.Name, spec.UUID)
}

// The controller-runtime peer of bench/controller.ts: one controller that reconciles every BenchWidget
// (bench.capstan.dev/v1alpha1) of a namespace into a ConfigMap, the same logic as the capstan peer
// (bench/peers/controller-child.ts): get the widget from the cache, create or update its ConfigMap with a
// controller owner reference, and patch the status once. Prints JSON lines on stdout:
// {"phase":"starting"} before the manager starts, {"phase":"stopped",...} with its request counts on SIGTERM.
//
//	controller -namespace NS -workers 4   (KUBECONFIG names the cluster)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

var groupVersion = schema.GroupVersion{Group: "bench.capstan.dev", Version: "v1alpha1"}

// BenchWidget is the benchmark's custom resource; a hand-written DeepCopyObject stands in for controller-gen.
type BenchWidget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              BenchWidgetSpec   `json:"spec"`
	Status            BenchWidgetStatus `json:"status,omitempty"`
}

type BenchWidgetSpec struct {
	Message string `json:"message"`
}

type BenchWidgetStatus struct {
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
	ConfigMap          string `json:"configMap,omitempty"`
}

type BenchWidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BenchWidget `json:"items"`
}

func (in *BenchWidget) DeepCopy() *BenchWidget {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

func (in *BenchWidget) DeepCopyObject() runtime.Object { return in.DeepCopy() }

func (in *BenchWidgetList) DeepCopyObject() runtime.Object {
	out := *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]BenchWidget, len(in.Items))
	for i := range in.Items {
		out.Items[i] = *in.Items[i].DeepCopy()
	}
	return &out
}

type reconciler struct {
	client.Client
	scheme *runtime.Scheme
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var widget BenchWidget
	if err := r.Get(ctx, req.NamespacedName, &widget); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: widget.Name + "-cm", Namespace: widget.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = map[string]string{"message": widget.Spec.Message}
		return controllerutil.SetControllerReference(&widget, cm, r.scheme)
	}); err != nil {
		return ctrl.Result{}, err
	}
	if widget.Status.ObservedGeneration != widget.Generation || widget.Status.ConfigMap != cm.Name {
		patch := client.MergeFrom(widget.DeepCopy())
		widget.Status.ObservedGeneration = widget.Generation
		widget.Status.ConfigMap = cm.Name
		if err := r.Status().Patch(ctx, &widget, patch); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

func main() {
	if len(os.Args) < 2 || os.Args[1] != "controller" {
		fail(fmt.Errorf("usage: controller-runtime-peer controller -namespace NS -workers N"))
	}
	fs := flag.NewFlagSet("controller", flag.ExitOnError)
	namespace := fs.String("namespace", "", "namespace to reconcile")
	workers := fs.Int("workers", 1, "MaxConcurrentReconciles")
	_ = fs.Parse(os.Args[2:])
	ctrl.SetLogger(logr.Discard())

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fail(err)
	}
	scheme.AddKnownTypes(groupVersion, &BenchWidget{}, &BenchWidgetList{})
	metav1.AddToGroupVersion(scheme, groupVersion)

	config, err := ctrl.GetConfig()
	if err != nil {
		fail(err)
	}
	// No client-side throttling, like the capstan peer (controller-runtime's default is 20 QPS, burst 30).
	config.QPS, config.Burst = 1000, 1000
	mgr, err := ctrl.NewManager(config, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{*namespace: {}}},
	})
	if err != nil {
		fail(err)
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("benchwidget").
		For(&BenchWidget{}).
		Owns(&corev1.ConfigMap{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: *workers}).
		Complete(&reconciler{Client: mgr.GetClient(), scheme: scheme})
	if err != nil {
		fail(err)
	}
	emit(map[string]any{"phase": "starting"})
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		fail(err)
	}
	var usage syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &usage)
	emit(map[string]any{
		"phase":        "stopped",
		"requests":     requestCounts(),
		"cpuSeconds":   time.Duration(usage.Utime.Nano() + usage.Stime.Nano()).Seconds(),
		"peakRssBytes": usage.Maxrss * 1024, // Linux: kB; the same figure as VmHWM
	})
}

// requestCounts sums rest_client_requests_total (controller-runtime registers client-go's) by method.
func requestCounts() map[string]float64 {
	counts := map[string]float64{}
	families, err := metrics.Registry.Gather()
	if err != nil {
		fail(err)
	}
	for _, family := range families {
		if family.GetName() != "rest_client_requests_total" {
			continue
		}
		for _, m := range family.GetMetric() {
			for _, label := range m.GetLabel() {
				if label.GetName() == "method" {
					counts[label.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return counts
}

func emit(v map[string]any) {
	line, _ := json.Marshal(v)
	fmt.Println(string(line))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "controller-runtime peer:", err)
	os.Exit(1)
}

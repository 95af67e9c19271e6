// The client-go peer of bench/peers.ts: a ConfigMap informer (sync time, peak RSS, update events/s) and
// the work queue throughput scenario of bench/queue.ts. Prints one JSON object per phase on stdout.
//
//	informer -namespace NS -expect N -updates U   (KUBECONFIG names the cluster)
//	queue -adds 1000000 -workers 4 [-metrics]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
	// Imported for its side effect only: it registers controller-runtime's workqueue metrics provider
	// (sigs.k8s.io/controller-runtime/pkg/internal/metrics: prometheus client_golang gauges, counters and
	// histograms labelled name and controller), as every controller-runtime manager has it registered.
	_ "sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
)

func main() {
	if len(os.Args) < 2 {
		fail(fmt.Errorf("usage: client-go-peer informer|queue [flags]"))
	}
	switch os.Args[1] {
	case "informer":
		runInformer(os.Args[2:])
	case "queue":
		runQueue(os.Args[2:])
	default:
		fail(fmt.Errorf("unknown command %q", os.Args[1]))
	}
}

// runInformer syncs a namespace's ConfigMaps, reports, then waits for `updates` update events.
// The parent starts its writer once it reads the "synced" line.
func runInformer(args []string) {
	fs := flag.NewFlagSet("informer", flag.ExitOnError)
	namespace := fs.String("namespace", "", "namespace to watch")
	expect := fs.Int("expect", 0, "objects the first list must hold")
	updates := fs.Int64("updates", 0, "update events to wait for after the sync")
	timeout := fs.Duration("timeout", 5*time.Minute, "give up after this long")
	_ = fs.Parse(args)

	config, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fail(err)
	}
	config.QPS, config.Burst = 1000, 1000 // no client-side throttling, like the Node peers
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	baseRss := procStatusBytes("VmRSS:")
	var received atomic.Int64
	var firstUpdate atomic.Int64 // unix nanos of the first update event
	done := make(chan time.Time, 1)
	started := time.Now()
	cpuAtStart := cpuSeconds()
	factory := informers.NewSharedInformerFactoryWithOptions(clientset, 0, informers.WithNamespace(*namespace))
	informer := factory.Core().V1().ConfigMaps().Informer()
	_, err = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, _ any) {
			n := received.Add(1)
			if n == 1 {
				firstUpdate.Store(time.Now().UnixNano())
			}
			if n == *updates {
				done <- time.Now()
			}
		},
	})
	if err != nil {
		fail(err)
	}
	factory.Start(ctx.Done())
	// Not cache.WaitForCacheSync: it polls every 100 ms, which would round client-go's sync time up to the
	// next multiple of 100 ms (a 0.12 s sync measured as 0.2 s). Polling every millisecond costs nothing
	// that shows and measures the sync to within a millisecond, as capstan's peer measures its own.
	for !informer.HasSynced() {
		select {
		case <-ctx.Done():
			fail(fmt.Errorf("informer did not sync within %s", *timeout))
		case <-time.After(time.Millisecond):
		}
	}
	syncSeconds := time.Since(started).Seconds()
	syncCpuSeconds := cpuSeconds() - cpuAtStart
	if size := len(informer.GetStore().ListKeys()); size != *expect {
		fail(fmt.Errorf("synced %d objects, expected %d", size, *expect))
	}
	emit(map[string]any{
		"phase":            "synced",
		"syncSeconds":      syncSeconds,
		"syncCpuSeconds":   syncCpuSeconds,
		"baseRssBytes":     baseRss,
		"syncPeakRssBytes": vmHWM(),
	})

	cpuBefore := cpuSeconds()
	select {
	case last := <-done:
		seconds := last.Sub(time.Unix(0, firstUpdate.Load())).Seconds()
		emit(map[string]any{
			"phase":          "updated",
			"updates":        *updates,
			"updateSeconds":  seconds,
			"cpuSeconds":     cpuSeconds() - cpuBefore,
			"peakRssBytes":   vmHWM(),
			"objectsInCache": len(informer.GetStore().ListKeys()),
		})
	case <-ctx.Done():
		fail(fmt.Errorf("received %d of %d updates before the timeout", received.Load(), *updates))
	}
	cancel()
	factory.Shutdown()
}

// runQueue measures add+get+done cycles per second over `adds` distinct keys with `workers` goroutines,
// the same pattern as bench/queue.ts: a producer adds while the workers drain, then the queue shuts down.
// Without -metrics the queue has no name, so client-go records no metrics for it. With -metrics it is the
// queue a controller-runtime controller gets: a rate-limiting queue named after the controller, with the
// default controller rate limiter, recording the workqueue_* metrics through controller-runtime's provider.
func runQueue(args []string) {
	fs := flag.NewFlagSet("queue", flag.ExitOnError)
	adds := fs.Int("adds", 1_000_000, "adds, each over a new key")
	workers := fs.Int("workers", 1, "worker goroutines")
	metrics := fs.Bool("metrics", false, "record the workqueue_* metrics, as a controller-runtime controller does")
	_ = fs.Parse(args)

	keys := make([]string, *adds)
	for i := range keys {
		keys[i] = "namespace/object-" + strconv.Itoa(i)
	}
	newQueue := func(run int) workqueue.TypedInterface[string] {
		if !*metrics {
			return workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: ""})
		}
		// A name per run: client-go's provider hands out one series per name, as for one controller each.
		return workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "bench-" + strconv.Itoa(run)},
		)
	}
	measure := func(run, n int) (float64, float64, int64) {
		queue := newQueue(run)
		var processed atomic.Int64
		var wg sync.WaitGroup
		cpuBefore := cpuSeconds()
		started := time.Now()
		for range *workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					item, shutdown := queue.Get()
					if shutdown {
						return
					}
					processed.Add(1)
					queue.Done(item)
				}
			}()
		}
		for _, key := range keys[:n] {
			queue.Add(key)
		}
		queue.ShutDownWithDrain()
		wg.Wait()
		return time.Since(started).Seconds(), cpuSeconds() - cpuBefore, processed.Load()
	}
	measure(0, *adds/10) // warm-up, as bench/queue.ts does
	seconds, cpu, processed := measure(1, *adds)
	emit(map[string]any{
		"phase":      "queue",
		"workers":    *workers,
		"metrics":    *metrics,
		"processed":  processed,
		"seconds":    seconds,
		"opsPerSec":  float64(processed) / seconds,
		"cpuSeconds": cpu,
		"cpuNsPerOp": cpu * 1e9 / float64(processed),
		"gomaxprocs": os.Getenv("GOMAXPROCS"),
	})
}

// vmHWM is this process's peak resident set size in bytes.
func vmHWM() int64 { return procStatusBytes("VmHWM:") }

// procStatusBytes reads one "Vm...: N kB" field of /proc/self/status, in bytes.
func procStatusBytes(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if rest, ok := strings.CutPrefix(scanner.Text(), field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// cpuSeconds is the user+system CPU time this process has used so far.
func cpuSeconds() float64 {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano()).Seconds()
}

func emit(v map[string]any) {
	line, _ := json.Marshal(v)
	fmt.Println(string(line))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "client-go peer:", err)
	os.Exit(1)
}

package gcfloor

import (
	"context"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name        string
		live, floor uint64
		want        int
	}{
		{"live past half the floor is paced by Go's default", 40 * mib, 64 * mib, 100},
		{"live at half the floor", 32 * mib, 64 * mib, 100},
		{"small live heap: the goal is the floor", 8 * mib, 64 * mib, 700},
		{"tiny live heap: capped where Go's scaled minimum reaches the floor", 100 << 10, 64 * mib, 1600},
		{"nothing marked yet", 0, 64 * mib, 1600},
		{"a floor under Go's minimum never lowers the default", 1 * mib, 2 * mib, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := percentFor(tc.live, tc.floor); got != tc.want {
				t.Fatalf("percentFor(%d, %d) = %d, want %d", tc.live, tc.floor, got, tc.want)
			}
		})
	}
}

// TestFloorFollowsCollections starts a floor, has the runtime collect three times, and
// checks that each collection was followed by a pacing that the runtime took and that puts
// the heap goal near the floor; after Stop Go's default is back and stays.
func TestFloorFollowsCollections(t *testing.T) {
	t.Setenv("GOGC", "") // empty is Go's default, as the runtime reads it
	const floor = 256 << 20
	tuned := make(chan int, 64)
	f := start(floor, func(p int) {
		select {
		case tuned <- p:
		default:
		}
	})
	if f == nil {
		t.Fatal("start answered nil with GOGC unset")
	}
	t.Cleanup(f.Stop)
	<-tuned // the percent applied at start
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var p int
	for i := range 3 { // each collection re-arms the next
		runtime.GC()
		select {
		case p = <-tuned:
		case <-ctx.Done():
			t.Fatalf("collection %d was not heard of", i+1)
		}
	}
	// A collection the runtime starts by itself may pace again meanwhile, from a live
	// heap a little different: the runtime's GOGC is the floor's, not necessarily p.
	if p <= basePercent {
		t.Fatalf("a test binary's live heap is far under 128 MiB, yet the percent is %d", p)
	}
	if got := readUint(t, "/gc/gogc:percent"); got <= basePercent {
		t.Fatalf("the runtime's GOGC is %d after the floor applied %d", got, p)
	}
	live, goal := readUint(t, liveMetric), readUint(t, "/gc/heap/goal:bytes")
	if goal < floor/2 || goal > 2*floor {
		t.Fatalf("heap goal %d MiB with %d MiB live: want about the %d MiB floor", goal>>20, live>>20, floor>>20)
	}

	f.Stop()
	if got := readUint(t, "/gc/gogc:percent"); got != basePercent {
		t.Fatalf("after Stop GOGC is %d, want %d", got, basePercent)
	}
	runtime.GC()
	runtime.GC() // a cleanup queued by the first collection has run by the end of the second's
	if got := readUint(t, "/gc/gogc:percent"); got != basePercent {
		t.Fatalf("a collection after Stop set GOGC to %d", got)
	}
}

func TestGOGCInTheEnvironmentWins(t *testing.T) {
	t.Setenv("GOGC", "200")
	if f := Start(64 << 20); f != nil {
		f.Stop()
		t.Fatal("the floor started although GOGC is set")
	}
}

func TestZeroFloorIsOff(t *testing.T) {
	t.Setenv("GOGC", "") // empty is Go's default, as the runtime reads it
	if f := Start(0); f != nil {
		f.Stop()
		t.Fatal("a zero floor started")
	}
	var nilFloor *Floor
	nilFloor.Stop() // a nil floor stops as a no-op
}

func readUint(t *testing.T, name string) uint64 {
	t.Helper()
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		t.Fatalf("runtime metric %s is not available", name)
	}
	return s[0].Value.Uint64()
}

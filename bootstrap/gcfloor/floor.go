package gcfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// basePercent is Go's own GOGC, which the floor starts from and returns to.
const basePercent = 100

// goMinHeap is the runtime's smallest heap goal at GOGC=100. Go scales it by GOGC/100
// too, so the percent is capped where that scaled minimum reaches the floor: past it, a
// small live heap (or the first cycle, before anything was marked) would get a goal far
// above the floor.
const goMinHeap = 4 << 20

// liveMetric is the heap the last collection found live.
const liveMetric = "/gc/heap/live:bytes"

// Floor keeps the heap goal at or above its floor until Stop.
type Floor struct {
	floor uint64
	// mu orders a collection's pacing against Stop, so a cycle that began before Stop
	// cannot set its percent after Stop restored Go's.
	mu      sync.Mutex
	stopped bool
	// tuned, when set, hears each percent applied (tests).
	tuned func(percent int)
}

// Start keeps the heap goal at or above floor bytes. It answers nil, leaving Go's pacing
// alone, when floor is 0 or when GOGC is set in the environment: whoever set GOGC chose
// the pacing. An empty GOGC is Go's default, as the runtime reads it.
func Start(floor uint64) *Floor {
	return start(floor, nil)
}

func start(floor uint64, tuned func(int)) *Floor {
	if floor == 0 {
		return nil
	}
	if os.Getenv("GOGC") != "" {
		return nil
	}
	f := &Floor{floor: floor, tuned: tuned}
	f.pace()
	return f
}

// Stop gives the pacing back to Go's default; a nil Floor is a no-op.
func (f *Floor) Stop() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return
	}
	f.stopped = true
	debug.SetGCPercent(basePercent)
}

// sentinel is an object kept by nobody, so each collection frees it and runs its cleanup.
// The pointer keeps it out of the tiny allocator, whose shared blocks could outlive it.
type sentinel struct {
	_ *byte
	_ [8]byte
}

// arm asks to hear of the next collection.
func (f *Floor) arm() {
	runtime.AddCleanup(new(sentinel), func(f *Floor) { f.cycle() }, f)
}

// cycle runs after a collection: it paces the next one from the heap this one left live.
func (f *Floor) cycle() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return
	}
	f.pace()
}

// pace sets the percent from the live heap and arms for the next collection; only then
// does it tell tuned, so whoever hears it and collects finds the new sentinel allocated
// (one allocated while a collection marks survives that collection).
func (f *Floor) pace() {
	p := percentFor(liveHeap(), f.floor)
	debug.SetGCPercent(p)
	f.arm()
	if f.tuned != nil {
		f.tuned(p)
	}
}

// percentFor is the GOGC that puts the next goal (live + live × percent / 100) at the
// floor, and never below Go's default: a live heap past half the floor is paced as usual.
func percentFor(live, floor uint64) int {
	live = max(live, 1)
	if live+live*basePercent/100 >= floor {
		return basePercent
	}
	p := min((floor-live)*100/live, floor*100/goMinHeap)
	return int(max(p, basePercent))
}

// liveHeap reads the heap the last collection left live; 0 before the first.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: liveMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

package runs_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
)

func TestWatchWakesTheFollowersOfOneRun(t *testing.T) {
	t.Parallel()
	w := runs.NewWatch()
	a, stopA := w.Follow("r-1")
	b, stopB := w.Follow("r-1")
	other, stopOther := w.Follow("r-2")
	defer stopOther()

	// Two changes before anyone reads are one pending signal: Changed never blocks.
	w.Changed("r-1")
	w.Changed("r-1")
	<-a
	<-b
	select {
	case <-a:
		t.Fatal("two changes before a read are one signal")
	case <-other:
		t.Fatal("a change of r-1 woke a follower of r-2")
	default:
	}

	// A change between a follower's read and its wait is kept for the wait; a stopped
	// follower hears nothing more.
	stopB()
	stopB() // stopping twice is harmless
	w.Changed("r-1")
	<-a
	require.Empty(t, b, "a stopped follower is not woken")
	stopA()
	w.Changed("r-1") // nobody follows: nothing to wake, nothing blocks

	// "" stands for several runs: every follower re-reads.
	c, stopC := w.Follow("r-3")
	defer stopC()
	w.Changed("")
	<-c
	<-other

	var none *runs.Watch
	none.Changed("r-1") // a server without a watch tells nobody
}

package generate

import (
	"sync"
	"time"

	"github.com/sluicehq/sluice/application/execute"
)

var firstNames = [...]string{
	"Ada", "Alan", "Barbara", "Claude", "Dennis", "Donald", "Edsger", "Frances",
	"Grace", "Guido", "Hedy", "Ivan", "Jean", "John", "Ken", "Leslie",
	"Linus", "Margaret", "Niklaus", "Radia", "Rob", "Ruth", "Shafi", "Sophie",
	"Tim", "Tony", "Vint", "Whitfield", "Xavier", "Yukihiro", "Zhores", "Katherine",
}

var lastNames = [...]string{
	"Allen", "Backus", "Cerf", "Dijkstra", "Engelbart", "Floyd", "Goldwasser", "Hopper",
	"Iverson", "Johnson", "Kay", "Liskov", "Lamport", "McCarthy", "Naur", "Ousterhout",
	"Perlman", "Pike", "Ritchie", "Stroustrup", "Thompson", "Turing", "Ullman", "Vaughan",
	"Wirth", "Wilson", "Hamilton", "Hoare", "Knuth", "Lovelace", "Matsumoto", "Torvalds",
}

// fullNames is every "first last" pair, built once per process and never changed: a
// name costs no allocation per row, and a source costs none per run (building the table
// for each of many one-row runs was a tenth of a busy server's CPU).
var fullNames = sync.OnceValue(func() []string {
	names := make([]string, 0, len(firstNames)*len(lastNames))
	for _, f := range firstNames {
		for _, l := range lastNames {
			names = append(names, f+" "+l)
		}
	}
	return names
})

// generator holds what is shared by all rows of one seed: the name table and the base
// instant of created_at.
type generator struct {
	seed  uint64
	names []string
	base  time.Time
}

func newGenerator(seed int64) *generator {
	g := &generator{seed: uint64(seed), names: fullNames()}
	// created_at starts at a seed-dependent hour of 2024 and advances one second per id
	// (plus sub-second jitter), so it is increasing like a real insertion time.
	hours := int64(mix(g.seed) % (366 * 24))
	g.base = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(hours) * time.Hour)
	return g
}

// mix is SplitMix64's finalizer: a cheap bijective hash with good avalanche.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// page builds n rows starting at id first. All values of the page share one backing
// array so a page costs a handful of allocations beyond boxing the values.
func (g *generator) page(cols []string, first int64, n int) *execute.Page {
	nc := len(cols)
	vals := make([]any, n*nc)
	rows := make([][]any, n)
	var bytes int64
	for i := range n {
		id := first + int64(i)
		h := mix(g.seed*0x9e3779b97f4a7c15 ^ uint64(id))
		row := vals[i*nc : (i+1)*nc : (i+1)*nc]
		for j, c := range cols {
			switch c {
			case "id":
				row[j] = id
				bytes += 8
			case "name":
				name := g.names[h%uint64(len(g.names))]
				row[j] = name
				bytes += int64(len(name))
			case "amount":
				row[j] = float64((h>>16)%1_000_000) / 100
				bytes += 8
			case "active":
				row[j] = h>>63 == 1
				bytes++
			case "created_at":
				row[j] = g.base.Add(time.Duration(id)*time.Second + time.Duration((h>>8)%1000)*time.Millisecond)
				bytes += 24
			}
		}
		rows[i] = row
	}
	return &execute.Page{Columns: append([]string(nil), cols...), Rows: rows, Bytes: bytes}
}

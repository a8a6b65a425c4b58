package suites

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Where the CPU went while a benchmark ran, from Linux's /proc: the whole machine's busy
// time, the sluice member processes', and PostgreSQL's (when it runs on this machine).
// On a small machine every process competes for the same cores, so a throughput number
// means little without this split; elsewhere the readings are simply absent.

// userHZ is the unit of /proc's CPU times (USER_HZ, 100 on every Linux ABI).
const userHZ = 100

// cpuSnapshot is one reading of the counters, in USER_HZ ticks.
type cpuSnapshot struct {
	at         time.Time
	ok         bool // /proc/stat was readable
	busy, all  uint64
	members    uint64
	postgres   uint64
	postgresOK bool // a postmaster was found
}

// takeCPU reads the counters; pids are the sluice members to account for.
func takeCPU(pids []int) cpuSnapshot {
	s := cpuSnapshot{at: time.Now()}
	if f, err := os.Open("/proc/stat"); err == nil {
		sc := bufio.NewScanner(f)
		if sc.Scan() {
			s.busy, s.all, s.ok = machineTicks(sc.Text())
		}
		_ = f.Close()
	}
	for _, pid := range pids {
		if st, ok := procStat(pid); ok {
			s.members += st.utime + st.stime
		}
	}
	s.postgres, s.postgresOK = postgresTicks()
	return s
}

// machineTicks parses the aggregate "cpu" line of /proc/stat: busy is everything but
// idle and iowait; guest time is already inside user.
func machineTicks(line string) (busy, all uint64, ok bool) {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, false
	}
	var v [8]uint64
	for i := range v {
		n, err := strconv.ParseUint(f[i+1], 10, 64)
		if err != nil {
			return 0, 0, false
		}
		v[i] = n
		all += n
	}
	return all - v[3] - v[4], all, true
}

// procTimes are the CPU fields of /proc/PID/stat.
type procTimes struct {
	comm                         string
	ppid                         int
	utime, stime, cutime, cstime uint64
}

func procStat(pid int) (procTimes, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procTimes{}, false
	}
	return parseProcStat(string(b))
}

// parseProcStat reads "PID (COMM) STATE PPID …": the command name may hold spaces and
// parentheses, so the fields are counted from its last ')'.
func parseProcStat(s string) (procTimes, bool) {
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return procTimes{}, false
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 15 {
		return procTimes{}, false
	}
	p := procTimes{comm: s[open+1 : end]}
	var err error
	if p.ppid, err = strconv.Atoi(f[1]); err != nil {
		return procTimes{}, false
	}
	// Fields 14–17 of the man page (utime, stime, cutime, cstime) are f[11:15].
	for i, dst := range []*uint64{&p.utime, &p.stime, &p.cutime, &p.cstime} {
		n, err := strconv.ParseInt(f[11+i], 10, 64)
		if err != nil {
			return procTimes{}, false
		}
		*dst = uint64(max(n, 0))
	}
	return p, true
}

// postgresTicks sums the CPU of every process named postgres plus what the postmaster
// reaped from exited children: a backend that served one pipeline and exited between two
// readings is counted through its parent, so a difference of two readings is exact.
func postgresTicks() (uint64, bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	procs := map[int]procTimes{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := procStat(pid); ok && p.comm == "postgres" {
			procs[pid] = p
		}
	}
	var total uint64
	found := false
	for _, p := range procs {
		total += p.utime + p.stime
		if _, child := procs[p.ppid]; !child {
			total += p.cutime + p.cstime // the postmaster
			found = true
		}
	}
	return total, found
}

// cpuUse is the difference of two snapshots in cores (CPU seconds per wall second).
type cpuUse struct {
	ok                bool
	busy, members, pg float64
	postgresOK        bool
}

func cpuBetween(a, b cpuSnapshot) cpuUse {
	wall := b.at.Sub(a.at).Seconds()
	if !a.ok || !b.ok || wall <= 0 || b.all <= a.all {
		return cpuUse{}
	}
	cores := func(t uint64) float64 { return float64(t) / userHZ / wall }
	u := cpuUse{ok: true, busy: float64(b.busy-a.busy) / float64(b.all-a.all),
		members: cores(b.members - a.members), postgresOK: a.postgresOK && b.postgresOK}
	if u.postgresOK && b.postgres >= a.postgres {
		u.pg = cores(b.postgres - a.postgres)
	}
	return u
}

// cells formats the use as the table's CPU columns: busy %, and cores used by the
// members, PostgreSQL and everything else.
func (u cpuUse) cells(cpus int) []string {
	if !u.ok {
		return []string{"n/a", "n/a", "n/a", "n/a"}
	}
	pg, other := "n/a", "n/a"
	if u.postgresOK {
		pg = fmt.Sprintf("%.2f", u.pg)
		other = fmt.Sprintf("%.2f", max(u.busy*float64(cpus)-u.members-u.pg, 0))
	}
	return []string{fmt.Sprintf("%.0f%%", 100*u.busy), fmt.Sprintf("%.2f", u.members), pg, other}
}

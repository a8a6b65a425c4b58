package schedule

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// ErrInvalidCron is matched (errors.Is) by every error Parse returns.
var ErrInvalidCron = errors.New("invalid cron expression")

// Field names used in error messages, in expression order.
const (
	FieldMinute     = "minute"
	FieldHour       = "hour"
	FieldDayOfMonth = "day-of-month"
	FieldMonth      = "month"
	FieldDayOfWeek  = "day-of-week"
)

// CronError says which field of an expression is wrong and why. Field is empty when the
// expression as a whole is wrong (field count, unknown macro).
type CronError struct {
	Expr    string
	Field   string
	Token   string
	Message string
}

func (e *CronError) Error() string {
	switch {
	case e.Field == "":
		return fmt.Sprintf("cron %q: %s", e.Expr, e.Message)
	case e.Token == "":
		return fmt.Sprintf("cron %q: %s field: %s", e.Expr, e.Field, e.Message)
	}
	return fmt.Sprintf("cron %q: %s field: %q %s", e.Expr, e.Field, e.Token, e.Message)
}

func (e *CronError) Is(target error) bool { return target == ErrInvalidCron }

// Spec is a parsed cron expression. The zero Spec never fires; build one with Parse.
type Spec struct {
	expr   string
	minute uint64 // bits 0..59
	hour   uint64 // bits 0..23
	dom    uint64 // bits 1..31
	month  uint64 // bits 1..12
	dow    uint64 // bits 0..6 (Sunday is 0; 7 is folded into 0)
	// domAny/dowAny: the field starts with `*`. Only when neither does is the either-day
	// rule used; otherwise a day must match both fields (SPEC §9.1).
	domAny, dowAny bool
	// wallClock: the hour field is fixed, so wall-clock DST rules apply (see doc.go).
	wallClock bool
}

// macros are the only `@` forms accepted; @every, @reboot and friends are not cron.
var macros = map[string]string{
	"@hourly":   "0 * * * *",
	"@daily":    "0 0 * * *",
	"@weekly":   "0 0 * * 0",
	"@monthly":  "0 0 1 * *",
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
}

type fieldDef struct {
	name     string
	min, max int // the range `*` and an open step cover
	hi       int // the largest value accepted (day-of-week takes 7 for Sunday)
	names    []string
}

var (
	monthNames = []string{"", "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}
	dayNames   = []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}
)

// fields returns the five field definitions; a function, not a package variable, so
// nothing mutable is shared.
func fields() [5]fieldDef {
	return [5]fieldDef{
		{name: FieldMinute, min: 0, max: 59, hi: 59},
		{name: FieldHour, min: 0, max: 23, hi: 23},
		{name: FieldDayOfMonth, min: 1, max: 31, hi: 31},
		{name: FieldMonth, min: 1, max: 12, hi: 12, names: monthNames},
		// `*` and `N/step` end at Saturday; 7 is only another spelling of Sunday.
		{name: FieldDayOfWeek, min: 0, max: 6, hi: 7, names: dayNames},
	}
}

// Parse reads a five-field cron expression (minute hour day-of-month month day-of-week)
// or one of the macros @hourly @daily @weekly @monthly @yearly @annually. Fields take
// lists, ranges and steps ≥ 1 (`*/15`, `1-30/5`, `5/10` = from 5 to the field's end);
// months and weekdays also take names (JAN, sun; any case). Nothing else parses: no
// seconds field, no `?`, `L`, `W`, `#`, no @every, no CRON_TZ. A day-of-month that no
// selected month has (`0 0 30 2 *`) is refused, so every parsed Spec fires.
func Parse(expr string) (Spec, error) {
	text := strings.TrimSpace(expr)
	if strings.HasPrefix(text, "@") {
		m, ok := macros[text]
		if !ok {
			return Spec{}, &CronError{Expr: expr, Message: "unknown macro; use @hourly, @daily, @weekly, @monthly, @yearly or @annually"}
		}
		s, err := Parse(m)
		if err != nil {
			return Spec{}, err
		}
		s.expr = text
		return s, nil
	}
	if strings.HasPrefix(text, "CRON_TZ=") || strings.HasPrefix(text, "TZ=") {
		return Spec{}, &CronError{Expr: expr, Message: "a time zone prefix is not accepted; set the schedule's timezone instead"}
	}
	parts := strings.Fields(text)
	if len(parts) != 5 {
		msg := fmt.Sprintf("has %d fields, want 5: minute hour day-of-month month day-of-week", len(parts))
		if len(parts) == 6 {
			msg += " (there is no seconds field)"
		}
		return Spec{}, &CronError{Expr: expr, Message: msg}
	}
	defs := fields()
	var sets [5]uint64
	for i, p := range parts {
		set, err := parseField(p, defs[i])
		if err != nil {
			err.Expr = expr
			return Spec{}, err
		}
		sets[i] = set
	}
	s := Spec{
		expr:   strings.Join(parts, " "),
		minute: sets[0], hour: sets[1], dom: sets[2], month: sets[3],
		dow:    foldSunday(sets[4]),
		domAny: strings.HasPrefix(parts[2], "*"),
		dowAny: strings.HasPrefix(parts[4], "*"),
		// A fixed hour has neither `*` nor a step in any list element.
		wallClock: !strings.ContainsAny(parts[1], "*/"),
	}
	if err := s.checkDays(); err != nil {
		err.Expr = expr
		return Spec{}, err
	}
	return s, nil
}

// String is the expression as parsed (whitespace normalised, macros kept).
func (s Spec) String() string { return s.expr }

// IsZero reports whether s is the zero Spec (never parsed).
func (s Spec) IsZero() bool { return s.minute == 0 }

func foldSunday(set uint64) uint64 {
	if set&(1<<7) != 0 {
		set = set&^(1<<7) | 1
	}
	return set
}

// maxDays is the longest each month can be (February in a leap year).
var maxDays = [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// checkDays refuses expressions whose day-of-month never occurs in a selected month.
// Only that can make a parsed expression impossible: a weekday occurs in every month,
// and a `*` day-of-month always includes the 1st.
func (s Spec) checkDays() *CronError {
	if s.domAny {
		return nil // includes the 1st; any weekday set meets it some year
	}
	if !s.dowAny {
		return nil // either-day rule: the weekdays alone fire
	}
	for m := 1; m <= 12; m++ {
		if s.month&(1<<m) == 0 {
			continue
		}
		if s.dom&(uint64(1)<<(maxDays[m]+1)-1) != 0 {
			return nil
		}
	}
	return &CronError{Field: FieldDayOfMonth, Message: "never occurs in the selected months"}
}

func parseField(field string, def fieldDef) (uint64, *CronError) {
	var set uint64
	for _, item := range strings.Split(field, ",") {
		bad := func(tok, msg string) *CronError {
			return &CronError{Field: def.name, Token: tok, Message: msg}
		}
		if item == "" {
			return 0, &CronError{Field: def.name, Token: field, Message: "has an empty list element"}
		}
		rng, stepText, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || !isDigits(stepText) {
				return 0, bad(item, "has a step that is not a number")
			}
			if n < 1 {
				return 0, bad(item, "has a step below 1")
			}
			step = n
		}
		var lo, hi int
		switch {
		case rng == "*":
			lo, hi = def.min, def.max
		case strings.Contains(rng, "-"):
			a, b, _ := strings.Cut(rng, "-")
			var err string
			if lo, err = value(a, def); err != "" {
				return 0, bad(tokenOr(a, item), err)
			}
			if hi, err = value(b, def); err != "" {
				return 0, bad(tokenOr(b, item), err)
			}
			if lo > hi {
				return 0, bad(item, fmt.Sprintf("is a range that runs backwards (%d > %d)", lo, hi))
			}
		default:
			var err string
			if lo, err = value(rng, def); err != "" {
				return 0, bad(tokenOr(rng, item), err)
			}
			hi = lo
			if hasStep {
				hi = def.max // `5/10`: from 5 to the end of the field
				if lo > hi {
					hi = lo // `7/2` on weekdays: just Sunday
				}
			}
		}
		for v := lo; v <= hi; v += step {
			set |= 1 << v
		}
	}
	return set, nil
}

// value reads one number or name of a field; the returned string is the problem, if any.
func value(tok string, def fieldDef) (int, string) {
	if tok == "" {
		return 0, "has an empty range end"
	}
	if isDigits(tok) {
		n, err := strconv.Atoi(tok)
		if err != nil || n < def.min || n > def.hi {
			return 0, fmt.Sprintf("is out of range %d-%d", def.min, def.hi)
		}
		return n, ""
	}
	for i, name := range def.names {
		if name != "" && strings.EqualFold(tok, name) {
			return i, ""
		}
	}
	if def.names != nil {
		return 0, fmt.Sprintf("is not a number %d-%d or a name %s-%s", def.min, def.hi, def.names[def.min], def.names[len(def.names)-1])
	}
	return 0, fmt.Sprintf("is not a number %d-%d", def.min, def.hi)
}

// tokenOr names the offending part of an item, or the whole item when that part is empty.
func tokenOr(part, item string) string {
	if part == "" {
		return item
	}
	return part
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// nextBit is the smallest member of set that is ≥ from, or -1.
func nextBit(set uint64, from int) int {
	if from > 63 {
		return -1
	}
	rest := set >> from << from
	if rest == 0 {
		return -1
	}
	return bits.TrailingZeros64(rest)
}

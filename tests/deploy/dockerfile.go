package deploy

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Instruction is one Dockerfile instruction with its continuation lines joined.
type Instruction struct {
	Line int    // 1-based line of its first line
	Cmd  string // upper case: FROM, RUN, COPY, …
	Args string
}

// Stage is one FROM and what follows it until the next FROM.
type Stage struct {
	Base, Name   string
	Instructions []Instruction
}

// ParseDockerfile reads the instructions of a Dockerfile into stages; the instructions
// before the first FROM (ARGs) are returned apart. Comments and parser directives are
// skipped; a trailing backslash continues an instruction on the next line.
func ParseDockerfile(r io.Reader) (global []Instruction, stages []Stage, err error) {
	sc := bufio.NewScanner(r)
	var cur strings.Builder
	start, n := 0, 0
	flush := func() error {
		text := strings.TrimSpace(cur.String())
		cur.Reset()
		if text == "" {
			return nil
		}
		cmd, args, _ := strings.Cut(text, " ")
		in := Instruction{Line: start, Cmd: strings.ToUpper(cmd), Args: strings.TrimSpace(args)}
		if in.Cmd == "FROM" {
			f := strings.Fields(in.Args)
			st := Stage{Base: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.Name = f[2]
			} else if len(f) != 1 {
				return fmt.Errorf("line %d: FROM %q is not IMAGE [AS NAME]", start, in.Args)
			}
			stages = append(stages, st)
			return nil
		}
		if len(stages) == 0 {
			global = append(global, in)
			return nil
		}
		last := &stages[len(stages)-1]
		last.Instructions = append(last.Instructions, in)
		return nil
	}
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			continue
		}
		if cur.Len() == 0 {
			if line == "" {
				continue
			}
			start = n
		}
		if body, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(body + " ")
			continue
		}
		cur.WriteString(line)
		if err := flush(); err != nil {
			return nil, nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	return global, stages, flush()
}

package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: csv2jsonl IN.csv OUT.jsonl")
		os.Exit(2)
	}
	if err := convert(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "csv2jsonl:", err)
		os.Exit(1)
	}
}

func convert(in, out string) error {
	src, err := os.Open(in)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(out)
	if err != nil {
		return err
	}
	defer dst.Close()

	r := csv.NewReader(bufio.NewReader(src))
	w := bufio.NewWriter(dst)
	enc := json.NewEncoder(w) // Encode writes one value and a newline: one JSONL line
	header, err := r.Read()
	if err != nil {
		return fmt.Errorf("%s: header: %w", in, err)
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", in, err)
		}
		row := make(map[string]any, len(header))
		for i, name := range header {
			row[name] = rec[i]
		}
		if err := enc.Encode(row); err != nil {
			return fmt.Errorf("%s: %w", out, err)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	if err := dst.Sync(); err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	return dst.Close()
}

package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
)

// ServerFileName is the file `sluice serve` writes into its data directory while it runs,
// so the CLI started next to it finds the address without --server (SPEC §14.7).
const ServerFileName = "server.json"

// ServerFile is what serve records about itself for local clients.
type ServerFile struct {
	URL        string `json:"url"`
	PID        int    `json:"pid"`
	InstanceID string `json:"instance_id"`
}

// LocalURL turns a bound listen address into the URL a client on this machine dials:
// a wildcard host (0.0.0.0, ::) becomes the loopback address.
func LocalURL(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "http://" + listen
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// WriteServerFile records sf in dataDir (created when missing). It is written to a
// temporary name and renamed, so a reader never sees half a file.
func WriteServerFile(dataDir string, sf ServerFile) (string, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", fmt.Errorf("--data-dir: %w", err)
	}
	b, err := json.MarshalIndent(sf, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dataDir, ServerFileName)
	tmp, err := os.CreateTemp(dataDir, ServerFileName+".*")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	_, werr := tmp.Write(append(b, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return path, nil
}

// RemoveServerFile removes dataDir's server file if it is still this process's: a second
// server started on the same directory may have replaced it.
func RemoveServerFile(dataDir string, pid int) error {
	sf, err := ReadServerFile(dataDir)
	if err != nil || sf.PID != pid {
		return nil
	}
	err = os.Remove(filepath.Join(dataDir, ServerFileName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// ReadServerFile reads dataDir's server file; fs.ErrNotExist when no server wrote one.
func ReadServerFile(dataDir string) (ServerFile, error) {
	path := filepath.Join(dataDir, ServerFileName)
	b, err := os.ReadFile(path)
	if err != nil {
		return ServerFile{}, err
	}
	var sf ServerFile
	if err := json.Unmarshal(b, &sf); err != nil || sf.URL == "" {
		return ServerFile{}, fmt.Errorf("%s is not a server file of sluice serve (delete it): %v", path, err)
	}
	return sf, nil
}

package sqlspec

import "strings"

// Scrubber removes a connection's secrets (the URL's password) from error text: drivers
// do not put it in their messages, but a server message may quote a connection string
// back.
type Scrubber struct{ secrets []string }

// NewScrubber scrubs the non-empty secrets.
func NewScrubber(secrets ...string) *Scrubber {
	s := &Scrubber{}
	for _, x := range secrets {
		if x != "" {
			s.secrets = append(s.secrets, x)
		}
	}
	return s
}

// Wrap returns err with every secret replaced by REDACTED in its text; errors.Is and
// errors.As still see the original.
func (s *Scrubber) Wrap(err error) error {
	if err == nil || s == nil || len(s.secrets) == 0 {
		return err
	}
	msg := err.Error()
	clean := msg
	for _, p := range s.secrets {
		clean = strings.ReplaceAll(clean, p, "REDACTED")
	}
	if clean == msg {
		return err
	}
	return Reword(clean, err)
}

// Reword is err with msg as its text, still unwrapping to err.
func Reword(msg string, err error) error { return &reworded{msg: msg, err: err} }

type reworded struct {
	msg string
	err error
}

func (e *reworded) Error() string { return e.msg }
func (e *reworded) Unwrap() error { return e.err }

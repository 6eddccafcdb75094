package forge

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"slices"
)

// maskByte fills the place of a credential in an answer: the same number
// of bytes, so a Content-Length and git's pkt-line lengths still hold.
const maskByte = '*'

// secretForms are the spellings of a credential an answer could carry: the
// password (a token), user:password, and both in base64 (a Basic header
// echoed), standard and URL alphabets, at each of the three offsets a
// value can start at within a longer base64 text: each form is the part of
// the encoding that depends on the value's bytes alone.
func secretForms(user, password string) [][]byte {
	raw := [][]byte{[]byte(password)}
	if user != "" {
		raw = append(raw, []byte(user+":"+password))
	}
	forms := append([][]byte(nil), raw...)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for _, s := range raw {
			// Whole, as a header carries it, then within longer texts.
			forms = append(forms, []byte(enc.EncodeToString(s)), []byte(enc.WithPadding(base64.NoPadding).EncodeToString(s)))
			for k := range 3 {
				if f := base64Core(enc, s, k); len(f) > 0 {
					forms = append(forms, f)
				}
			}
		}
	}
	return forms
}

// base64Core is the part of enc's text for k bytes, then s, then anything,
// that only s decides: the characters whose six bits all come from s.
func base64Core(enc *base64.Encoding, s []byte, k int) []byte {
	full := (k + len(s)) / 3 * 3 // bytes of complete groups; the rest depends on what follows
	if full <= k {
		return nil
	}
	in := append(make([]byte, k), s...)[:full]
	text := []byte(enc.EncodeToString(in))
	skip := [3]int{0, 2, 3}[k] // characters that carry bits of the k bytes before s
	return text[skip:]
}

// masker replaces every form of a credential in what it reads.
type masker struct {
	forms [][]byte
	keep  int // the longest form's length less one: what may start a form cut in two
}

func newMasker(forms [][]byte) *masker {
	m := &masker{}
	// Longest first: a shorter form masked inside a longer one would leave
	// the rest of the longer one standing.
	forms = slices.Clone(forms)
	slices.SortStableFunc(forms, func(a, b []byte) int { return len(b) - len(a) })
	for _, f := range forms {
		if len(f) == 0 {
			continue
		}
		m.forms = append(m.forms, f)
		m.keep = max(m.keep, len(f)-1)
	}
	return m
}

// mask replaces the forms in b, in place.
func (m *masker) mask(b []byte) {
	for _, f := range m.forms {
		for i := 0; ; {
			j := bytes.Index(b[i:], f)
			if j < 0 {
				break
			}
			for n := range f {
				b[i+j+n] = maskByte
			}
			i += j + len(f)
		}
	}
}

// header masks every value of h, in place.
func (m *masker) header(h http.Header) {
	for k, vs := range h {
		for i, v := range vs {
			b := []byte(v)
			m.mask(b)
			h[k][i] = string(b)
		}
	}
}

// reader streams src with the forms masked. It holds back the last keep
// bytes of what it read until more arrive or src ends, so a form split
// between two reads is masked too.
func (m *masker) reader(src io.ReadCloser) io.ReadCloser {
	return &maskedReader{m: m, src: src, chunk: make([]byte, 32<<10)}
}

type maskedReader struct {
	m        *masker
	src      io.ReadCloser
	chunk    []byte
	held     []byte // read, masked, and possibly the start of a form
	ready    []byte // masked and final
	err      error  // src's error, returned once ready and held are out
	finished bool
}

func (r *maskedReader) Read(p []byte) (int, error) {
	for len(r.ready) == 0 {
		if r.finished {
			return 0, r.err
		}
		n, err := r.src.Read(r.chunk)
		r.held = append(r.held, r.chunk[:n]...)
		r.m.mask(r.held)
		if err != nil {
			r.finished, r.err = true, err
			r.ready, r.held = r.held, nil
			continue
		}
		if cut := len(r.held) - r.m.keep; cut > 0 {
			r.ready = append([]byte(nil), r.held[:cut]...)
			r.held = append(r.held[:0], r.held[cut:]...)
		}
	}
	n := copy(p, r.ready)
	r.ready = r.ready[n:]
	return n, nil
}

func (r *maskedReader) Close() error { return r.src.Close() }

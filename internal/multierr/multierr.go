package multierr

import (
	"slices"
	"strings"
)

// Error is errors said on one line, first to last, with sep between
// them; only the first keeps its "respire: " prefix.
type Error struct {
	errs []error
	sep  string
}

// Join returns the non-nil errs as one error said on one line, "; "
// between them: nil when there is none, the error itself when there is
// one.
func Join(errs ...error) error {
	var kept []error
	for _, err := range errs {
		if err != nil {
			kept = append(kept, err)
		}
	}
	switch len(kept) {
	case 0:
		return nil
	case 1:
		return kept[0]
	}
	return &Error{errs: kept, sep: "; "}
}

// With returns kind (a sentinel error saying what went wrong) followed
// by its detail, "kind: detail", matching both; kind alone when detail is
// nil.
func With(kind, detail error) error {
	if detail == nil {
		return kind
	}
	return &Error{errs: []error{kind, detail}, sep: ": "}
}

// Error says every error on one line: a line break inside one is said as
// "; ", only the first says "respire: ", and an error whose text another
// one says already (the same text, or as a part of its own) is not said
// again.
func (e *Error) Error() string {
	texts := make([]string, len(e.errs)) // without the prefix
	for i, err := range e.errs {
		texts[i] = strings.TrimPrefix(OneLine(err.Error()), "respire: ")
	}
	said := make([]string, 0, len(texts))
	for i, s := range texts {
		if !slices.Contains(said, s) && !saidElsewhere(texts, i) {
			said = append(said, s)
		}
	}
	s := strings.Join(said, e.sep)
	if strings.HasPrefix(e.errs[0].Error(), "respire: ") {
		s = "respire: " + s
	}
	return s
}

// saidElsewhere reports whether another of texts contains texts[i] as a
// part of a longer text.
func saidElsewhere(texts []string, i int) bool {
	for j, t := range texts {
		if j != i && len(t) > len(texts[i]) && strings.Contains(t, texts[i]) {
			return true
		}
	}
	return false
}

// Unwrap returns the errors, for errors.Is and errors.As.
func (e *Error) Unwrap() []error { return e.errs }

// OneLine returns s with each line break (and the spaces around it) said
// as "; ", for a text built from an error the library did not make.
func OneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	kept := lines[:0]
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "; ")
}

package main

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/respire-go/respire/internal/testenv"
)

// TestScan: scan prints every key matching --match, one per line.
func TestScan(t *testing.T) {
	addr := testenv.Standalone(t)
	k := "respire:cmdtest:" + t.Name() + ":"
	var want []string
	for i := range 30 {
		key := k + strconv.Itoa(i)
		want = append(want, key)
		runCLI(t, nil, "do", "--addr", addr, "SET", key, "v")
	}
	t.Cleanup(func() { runCLI(t, nil, append([]string{"do", "--addr", addr, "DEL"}, want...)...) })
	code, out, errs := runCLI(t, nil, "scan", "--addr", addr, "--match", k+"*", "--count", "7", "--type", "string")
	if code != exitOK || errs != "" {
		t.Fatalf("scan: exit %d, stderr %q", code, errs)
	}
	got := strings.Fields(out)
	slices.Sort(got)
	got = slices.Compact(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("scan printed %d distinct keys %q, want the %d keys set", len(got), got, len(want))
	}
	if code, _, errs := runCLI(t, nil, "scan", "--addr", addr, "--count", "-1"); code != exitUsage || !strings.Contains(errs, "negative COUNT") {
		t.Fatalf("scan --count -1: exit %d, stderr %q; want 2 and the reason", code, errs)
	}
}

// TestScanKeyIsOneLine: scan prints each key on one line whatever its
// bytes, quoted like subscribe quotes a payload when it could be misread
// (a newline, a control character, invalid UTF-8, a leading quote). A key
// holding a newline used to print as two keys.
func TestScanKeyIsOneLine(t *testing.T) {
	addr := testenv.Standalone(t)
	k := "respire:cmdtest:" + t.Name() + ":"
	keys := []string{k + "plain", k + "two\nlines", k + "tab\t", k + "\xff"}
	for _, key := range keys {
		runCLI(t, nil, "do", "--addr", addr, "SET", key, "v")
	}
	t.Cleanup(func() { runCLI(t, nil, append([]string{"do", "--addr", addr, "DEL"}, keys...)...) })
	code, out, errs := runCLI(t, nil, "scan", "--addr", addr, "--match", k+"*")
	if code != exitOK || errs != "" {
		t.Fatalf("scan: exit %d, stderr %q", code, errs)
	}
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	slices.Sort(got)
	got = slices.Compact(got)
	want := []string{k + "plain", quoteString(k + "two\nlines"), quoteString(k + "tab\t"), quoteString(k + "\xff")}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("scan printed lines %q, want %q", got, want)
	}
}

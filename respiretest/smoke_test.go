package respiretest

import (
	"testing"
	"testing/synctest"
	"time"
)

func TestServerSmoke(t *testing.T) {
	s := NewServer(t)
	c := dialProxy(t, s.Proxy)
	if got := c.do("SET", "k", "v"); got != "OK" {
		t.Fatalf("SET = %q", got)
	}
	if got := c.do("GET", "k"); got != "v" {
		t.Fatalf("GET = %q", got)
	}
	if got := s.Executed("SET"); got != 1 {
		t.Fatalf("Executed(SET) = %d, want 1", got)
	}
}

func TestSynctestDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(t)
		s.MustAddRule(t, Rule{Command: "PING", Action: Delay(5 * time.Second)})
		c := dialProxy(t, s.Proxy)
		start := time.Now()
		if got := c.do("PING"); got != "PONG" {
			t.Fatalf("PING = %q", got)
		}
		if got := time.Since(start); got != 5*time.Second {
			t.Fatalf("reply after %v, want exactly 5s", got)
		}
	})
}

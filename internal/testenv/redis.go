package testenv

import (
	"bufio"
	"errors"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// Redis is a redis-server process of one test, on a loopback port of its
// own: for tests that count the server's commands (INFO commandstats)
// without other packages' traffic, or that kill and restart a server.
type Redis struct {
	Addr    string
	Port    int
	Started time.Time // when the process started
	cmd     *exec.Cmd
	exited  chan struct{}
}

// RedisServerPath returns the redis-server binary, skipping the test
// without one (failing it under RESPIRE_REQUIRE_SERVERS=1).
func RedisServerPath(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("redis-server")
	if err != nil {
		if RequireServers() {
			t.Fatalf("redis-server not found but %s=1: %v", EnvRequireServers, err)
		}
		t.Skipf("redis-server not found: %v", err)
	}
	return p
}

// reservedPort reports whether the shared test servers or the benchmarks
// use port p.
func reservedPort(p int) bool {
	for _, r := range [][2]int{{16379, 16381}, {17000, 17005}, {26380, 26382}, {16390, 16393}, {27000, 27005}} {
		if p >= r[0] && p <= r[1] {
			return true
		}
	}
	return false
}

// StartRedis starts redis-server bin (no persistence) on a free loopback
// port, or on port when it is not 0, and waits until it answers PING. It
// is killed when the test ends.
func StartRedis(t testing.TB, bin string, port int) *Redis {
	t.Helper()
	for try := 0; ; try++ {
		p := port
		for p == 0 {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatalf("free port: %v", err)
			}
			p = l.Addr().(*net.TCPAddr).Port
			l.Close()
			if reservedPort(p) {
				p = 0
			}
		}
		r, err := launchRedis(t, bin, p)
		if err == nil {
			return r
		}
		if port != 0 || try == 4 {
			t.Fatalf("redis-server on port %d: %v", p, err)
		}
	}
}

func launchRedis(t testing.TB, bin string, port int) (*Redis, error) {
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", t.TempDir())
	r := &Redis{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Port: port, cmd: cmd,
		exited: make(chan struct{}), Started: time.Now()}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = cmd.Wait(); close(r.exited) }()
	t.Cleanup(r.Kill)
	// Readiness: poll PING with a bounded deadline (~0.1 s is typical).
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-r.exited:
			return nil, errors.New("exited before answering PING (port in use?)")
		default:
		}
		if answers(r.Addr) {
			return r, nil
		}
		if time.Now().After(deadline) {
			r.Kill()
			return nil, errors.New("no PONG within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// answers reports whether addr answers PING with PONG.
func answers(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && line == "+PONG\r\n"
}

// Kill sends SIGKILL and waits for the process to exit.
func (r *Redis) Kill() {
	_ = r.cmd.Process.Kill()
	<-r.exited
}

// Exited is closed once the process has exited.
func (r *Redis) Exited() <-chan struct{} { return r.exited }

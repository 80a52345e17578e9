package respiretest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/respire-go/respire/resp"
	"github.com/respire-go/respire/respiretest"
)

// roundTrip sends one command and returns its reply as text.
func roundTrip(conn net.Conn, rd *resp.Reader, args ...string) string {
	frame := resp.AppendArrayHeader(nil, len(args))
	for _, a := range args {
		frame = resp.AppendBulkString(frame, a)
	}
	if _, err := conn.Write(frame); err != nil {
		return "write error: " + err.Error()
	}
	v, err := rd.ReadValue()
	switch {
	case err != nil:
		return "connection lost"
	case v.IsError():
		return "error: " + v.Text()
	case v.IsNull():
		return "(nil)"
	}
	return v.Text()
}

// A rule makes the second INCR fail with LOADING without reaching the
// server; the third one passes.
func ExampleProxy_AddRule() {
	srv, err := respiretest.StartServer(respiretest.InMemory())
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	rule, err := srv.AddRule(respiretest.Rule{
		Command: "INCR",
		Nth:     2,
		Action:  respiretest.Inject(respiretest.ErrLoading),
	})
	if err != nil {
		panic(err)
	}
	conn, err := srv.Dial(context.Background(), "tcp", srv.Addr())
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	rd := resp.NewReader(conn)
	for range 3 {
		fmt.Println(roundTrip(conn, rd, "INCR", "counter"))
	}
	fmt.Println("matched", rule.Matched(), "forwarded", rule.Forwarded(), "server executed INCR", srv.Executed("INCR"), "times")
	// Output:
	// 1
	// error: LOADING Redis is loading the dataset in memory
	// 2
	// matched 3 forwarded 2 server executed INCR 2 times
}

// DropAfterForward lets the command run and loses its reply: the
// situation a retry policy must not resend blindly.
func ExampleDropAfterForward() {
	srv, err := respiretest.StartServer()
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	srv.AddRule(respiretest.Rule{Command: "INCR", Action: respiretest.DropAfterForward})

	conn, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		panic(err)
	}
	fmt.Println(roundTrip(conn, resp.NewReader(conn), "INCR", "counter"))
	conn.Close()

	conn, err = net.Dial("tcp", srv.Addr())
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	fmt.Println(roundTrip(conn, resp.NewReader(conn), "GET", "counter"))
	fmt.Println("server executed INCR", srv.Executed("INCR"), "time")
	// Output:
	// connection lost
	// 1
	// server executed INCR 1 time
}

// A held reply is released by the test, which learns of the frame's
// arrival from Received instead of sleeping.
func ExampleHold() {
	srv, err := respiretest.StartServer(respiretest.InMemory())
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	rule, _ := srv.AddRule(respiretest.Rule{Command: "GET", Action: respiretest.Hold})
	conn, _ := srv.Dial(context.Background(), "", "")
	defer conn.Close()
	reply := make(chan string)
	go func() { reply <- roundTrip(conn, resp.NewReader(conn), "GET", "k") }()
	<-rule.Received()
	fmt.Println("GET arrived; releasing")
	rule.Release()
	fmt.Println("reply:", <-reply)
	// Output:
	// GET arrived; releasing
	// reply: (nil)
}

// The embedded server emulates Redis 8.6 stream idempotency: a resent
// XADD with the same producer and idempotent ID returns the original entry.
func ExampleServer_idempotentXADD() {
	srv, err := respiretest.StartServer(respiretest.InMemory())
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	conn, _ := srv.Dial(context.Background(), "", "")
	defer conn.Close()
	rd := resp.NewReader(conn)
	first := roundTrip(conn, rd, "XADD", "orders", "IDMP", "producer-1", "order-42", "*", "item", "book")
	again := roundTrip(conn, rd, "XADD", "orders", "IDMP", "producer-1", "order-42", "*", "item", "book")
	fmt.Println("same ID:", first == again)
	fmt.Println("entries:", roundTrip(conn, rd, "XLEN", "orders"))
	// Output:
	// same ID: true
	// entries: 1
}

// FailWrites cuts the second write after 5 bytes: the peer sees a
// partial frame, the writer an error.
func ExampleFailWrites() {
	client, server := net.Pipe()
	received := make(chan string)
	go func() {
		b, _ := io.ReadAll(server)
		received <- string(b)
	}()
	conn := respiretest.FailWrites(client, 2, 5)
	conn.Write([]byte("PING\r\n"))
	n, err := conn.Write([]byte("SET k v\r\n"))
	fmt.Println(n, errors.Is(err, respiretest.ErrInjectedWrite))
	fmt.Printf("%q\n", <-received)
	server.Close()
	// Output:
	// 5 true
	// "PING\r\nSET k"
}

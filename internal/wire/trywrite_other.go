//go:build !unix

package wire

import "net"

// rawWriter returns nil: every frame goes through the writer goroutine.
func rawWriter(net.Conn) nonBlockingWriter { return nil }

package wire

// ring is a FIFO of frames.
type ring struct {
	buf        []*Frame
	head, size int
}

func (r *ring) push(f *Frame) {
	if r.size == len(r.buf) {
		nb := make([]*Frame, max(16, 2*len(r.buf)))
		for i := 0; i < r.size; i++ {
			nb[i] = r.buf[(r.head+i)%len(r.buf)]
		}
		r.buf, r.head = nb, 0
	}
	r.buf[(r.head+r.size)%len(r.buf)] = f
	r.size++
}

// drain appends every frame, oldest first, to dst and empties the ring.
func (r *ring) drain(dst []*Frame) []*Frame {
	for f := r.pop(); f != nil; f = r.pop() {
		dst = append(dst, f)
	}
	return dst
}

// each calls fn for every frame, oldest first.
func (r *ring) each(fn func(*Frame)) {
	for i := 0; i < r.size; i++ {
		fn(r.buf[(r.head+i)%len(r.buf)])
	}
}

func (r *ring) pop() *Frame {
	if r.size == 0 {
		return nil
	}
	f := r.buf[r.head]
	r.buf[r.head] = nil
	r.head = (r.head + 1) % len(r.buf)
	r.size--
	return f
}

package respire

import "github.com/respire-go/respire/resp"

// The entries of a Cluster's cache are also listed by the slot of their
// keys and by the node that served them, so that a slot's move or a
// node's lost tracking connection visits the entries concerned only.
// The lists run through the entries (only their heads are held in maps,
// one per slot and per node with entries), and a hit touches none of
// them.

// cacheLink is an entry's place in one of its lists.
type cacheLink struct{ prev, next *cacheEntry }

// The lists an entry is on, indexes of cacheEntry.links.
const (
	bySlot = iota // the entries of one slot
	byNode        // the entries one node served
)

// listPush puts e at the head of list l of k, whose heads are in heads.
func listPush[K comparable](heads map[K]*cacheEntry, k K, e *cacheEntry, l int) {
	if h := heads[k]; h != nil {
		e.links[l].next, h.links[l].prev = h, e
	}
	heads[k] = e
}

// listRemove takes e off list l of k, whose heads are in heads.
func listRemove[K comparable](heads map[K]*cacheEntry, k K, e *cacheEntry, l int) {
	ln := &e.links[l]
	switch {
	case ln.prev != nil:
		ln.prev.links[l].next = ln.next
	case ln.next != nil:
		heads[k] = ln.next
	default:
		delete(heads, k)
	}
	if ln.next != nil {
		ln.next.links[l].prev = ln.prev
	}
	*ln = cacheLink{}
}

// indexLocked lists e by its slot and node, when a Cluster node served
// it (off a Cluster, a lost connection or a move drops every entry or
// none).
func (cc *clientCache) indexLocked(e *cacheEntry) {
	if e.node == "" {
		return
	}
	listPush(cc.slotHeads, e.slot, e, bySlot)
	listPush(cc.nodeHeads, e.node, e, byNode)
}

// unindexLocked takes e off its lists.
func (cc *clientCache) unindexLocked(e *cacheEntry) {
	if e.node == "" {
		return
	}
	listRemove(cc.slotHeads, e.slot, e, bySlot)
	listRemove(cc.nodeHeads, e.node, e, byNode)
}

// dropSlots drops the entries whose keys are in one of slots: those slots
// changed primary (a Cluster's slot migration or failover). A key read as
// missing is tracked only by the node that answered; once its slot has
// moved, the new owner would never report another client's write to it.
// A read in flight is kept out by its publication's check that the node
// that answered still owns the slot (produce): the map changes before
// this runs, so a read either sees the new map there or is published
// before this drops it. Its cost is that of the slots and their entries,
// not of the whole cache.
func (cc *clientCache) dropSlots(slots []int) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for _, s := range slots {
		for e := cc.slotHeads[s]; e != nil; e = cc.slotHeads[s] {
			// The entries that read a key of e's are all in slot s (a
			// Cluster's cached read keeps its keys in one slot).
			cc.dropKeyOfLocked(e)
		}
	}
}

// dropNode handles the loss of the Cluster node addr's tracking (its
// connection ended, or it invalidated everything: a FLUSHALL there): the
// invalidations lost concern the keys it served only, so the entries it
// served go and the others stay, whatever node owns their slots now. A
// read in flight, whichever node it is on, publishes nothing: the node it
// reads from is known only once its reply is in, and the reply may have
// come on the lost connection (its waiters still get it).
func (cc *clientCache) dropNode(addr string) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for e := cc.nodeHeads[addr]; e != nil; e = cc.nodeHeads[addr] {
		// Another node's entries of e's key, if any (while a slot's move
		// is not yet handled), go too: they are read again.
		cc.dropKeyOfLocked(e)
	}
	for _, fl := range cc.flights {
		fl.dirty = true
	}
}

// dropKeyOfLocked drops e and every entry that reads e's first key, as
// one list (dropRefsLocked): dropping a hot key's entries one by one
// would search its list for each.
func (cc *clientCache) dropKeyOfLocked(e *cacheEntry) {
	if len(e.deps) > 0 {
		d := e.deps[0]
		refs := cc.byKey[d]
		delete(cc.byKey, d)
		cc.dropRefsLocked(refs)
	}
	if cc.entries[e.key] == e { // not on its key's list: still dropped
		cc.removeLocked(e)
	}
}

// nodeHandlers returns the OnPush and OnTrackingLost of the shared
// connection of the Cluster primary at addr.
func (cc *clientCache) nodeHandlers(addr string) (onPush func(v resp.Value), onLost func()) {
	onLost = func() { cc.dropNode(addr) }
	return func(v resp.Value) { cc.push(v, onLost) }, onLost
}

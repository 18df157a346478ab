package reputation

import (
	"math/bits"
)

// edgeStore holds the live graph's audits as columns (no padding between fields: 41 bytes
// an audit), and finds the one current for an auditor, subject and target through an
// open-addressing table of their places, keyed by the three (the target as its hash): about
// half the memory of a list of structs and a Go map from key to place, which at ten million
// audits held 375 MB for the map alone. Its zero value is empty and ready.
type edgeStore struct {
	auditor, subject []int32
	score            []float64
	time             []int64
	settled          []float64
	backed           []bool
	target           []uint64 // the target's hash (targetSeed)

	// slots holds place+1 of each audit (0: empty), at its key's hash, probing linearly;
	// a power of two long, at most three quarters full.
	slots []int32
}

// auditBytes is what an audit takes in the columns.
const auditBytes = 4 + 4 + 8 + 8 + 8 + 1 + 8

// len is how many audits the store holds.
func (s *edgeStore) len() int { return len(s.auditor) }

// reserve makes room for n audits in all, so a load of n does not copy the columns as they
// grow.
func (s *edgeStore) reserve(n int) {
	if n <= cap(s.auditor) {
		return
	}
	s.grow(n)
	if size := slotsFor(n); size > len(s.slots) {
		s.rehash(size)
	}
}

// grow makes room for n audits in the columns alone: for a load that appends to them and
// builds the table of places once at the end (rehash).
func (s *edgeStore) grow(n int) {
	if n <= cap(s.auditor) {
		return
	}
	s.auditor = append(make([]int32, 0, n), s.auditor...)
	s.subject = append(make([]int32, 0, n), s.subject...)
	s.score = append(make([]float64, 0, n), s.score...)
	s.time = append(make([]int64, 0, n), s.time...)
	s.settled = append(make([]float64, 0, n), s.settled...)
	s.backed = append(make([]bool, 0, n), s.backed...)
	s.target = append(make([]uint64, 0, n), s.target...)
}

// slotsFor is the table size that holds n audits at most three quarters full.
func slotsFor(n int) int {
	need := n + n/3 + 1
	if need < 16 {
		return 16
	}
	return 1 << bits.Len(uint(need-1))
}

// edge is audit i.
func (s *edgeStore) edge(i int32) liveEdge {
	return liveEdge{auditor: s.auditor[i], subject: s.subject[i], score: s.score[i], time: s.time[i], backed: s.backed[i], settled: s.settled[i]}
}

// home is the first slot of the key (auditor, subject, target) in a table of size slots: the
// target's hash is keyed by this process's seed, and the auditor and subject are mixed in.
func home(auditor, subject int32, target uint64, size int) int {
	h := (target ^ (uint64(uint32(auditor))<<32 | uint64(uint32(subject)))) * 0x9e3779b97f4a7c15
	return int(h >> (64 - bits.Len(uint(size-1))))
}

// find is the place of the audit of the key, and whether there is one; else the empty slot
// where it would go.
func (s *edgeStore) find(auditor, subject int32, target uint64) (place int32, slot int, ok bool) {
	mask := len(s.slots) - 1
	for k := home(auditor, subject, target, len(s.slots)); ; k = (k + 1) & mask {
		v := s.slots[k]
		if v == 0 {
			return -1, k, false
		}
		if i := v - 1; s.target[i] == target && s.auditor[i] == auditor && s.subject[i] == subject {
			return i, k, true
		}
	}
}

// put makes e the audit of its auditor, subject and target: it replaces the one there was,
// returned (ok), or is added.
func (s *edgeStore) put(e liveEdge, target uint64) (old liveEdge, ok bool) {
	if (s.len()+1)*4 > len(s.slots)*3 {
		s.rehash(max(16, 2*len(s.slots)))
	}
	i, slot, ok := s.find(e.auditor, e.subject, target)
	if ok {
		old = s.edge(i)
		s.score[i], s.time[i], s.backed[i], s.settled[i] = e.score, e.time, e.backed, e.settled
		return old, true
	}
	s.slots[slot] = int32(s.len()) + 1
	s.auditor = append(s.auditor, e.auditor)
	s.subject = append(s.subject, e.subject)
	s.score = append(s.score, e.score)
	s.time = append(s.time, e.time)
	s.settled = append(s.settled, e.settled)
	s.backed = append(s.backed, e.backed)
	s.target = append(s.target, target)
	return liveEdge{}, false
}

// rehash rebuilds the table at size slots (a power of two).
func (s *edgeStore) rehash(size int) {
	s.slots = make([]int32, size)
	mask := size - 1
	for i := range s.len() {
		k := home(s.auditor[i], s.subject[i], s.target[i], size)
		for s.slots[k] != 0 {
			k = (k + 1) & mask
		}
		s.slots[k] = int32(i) + 1
	}
}

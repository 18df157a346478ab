package erc8004

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/surety-ioa/surety/contracts"
)

// FuzzDecodeLog: any log at a registry's address (a topic of one of its events, any other
// topics and data) decodes or is refused, never panics, and what decodes names the event of
// its topic.
func FuzzDecodeLog(f *testing.F) {
	id, rep, val := common.Address{1}, common.Address{2}, common.Address{3}
	d, err := newDecoder(id, rep, val)
	if err != nil {
		f.Fatal(err)
	}
	var topics []common.Hash
	for t := range d.topics {
		topics = append(topics, t)
	}
	parsed, _ := contracts.ReputationRegistryMetaData.ParseABI()
	fb := parsed.Events["NewFeedback"]
	data, _ := fb.Inputs.NonIndexed().Pack(uint64(1), big.NewInt(-5), uint8(2), "t1", "t2", "e", "u", [32]byte{9})
	f.Add(uint8(2), uint8(0), []byte{}, data, uint8(3))
	f.Add(uint8(0), uint8(1), []byte{0xff}, []byte{}, uint8(2))
	f.Fuzz(func(t *testing.T, where, topic uint8, extra, data []byte, ntopics uint8) {
		l := types.Log{Address: []common.Address{id, rep, val, {4}}[where%4], Data: data}
		l.Topics = append(l.Topics, topics[int(topic)%len(topics)])
		for i := 1; i < int(ntopics%5); i++ {
			var h common.Hash
			copy(h[:], extra)
			h[0] ^= byte(i)
			l.Topics = append(l.Topics, h)
		}
		ev, ok, err := d.decode(&l)
		if err != nil || !ok {
			return
		}
		if ev.Name != d.topics[l.Topics[0]] {
			t.Errorf("decoded %s from a %s log", ev.Name, d.topics[l.Topics[0]])
		}
	})
}

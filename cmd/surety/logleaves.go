package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/verify"
)

// runLogLeaves prints the audit log's contents: its leaves with the signed audit envelopes
// they hash, by index or of one subject, with the heads and anchors they belong to, page by
// page as the node serves them. Each envelope is checked to hash to its leaf on the way.
func runLogLeaves(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "log leaves", "[--subject DID] [--from N] [--size N] [--limit N] [flags]", strings.TrimSpace(`
List the leaves of a node's audit log: the signed audit envelopes, each with the head that first
included it and the first head whose root is anchored on chain, from index --from below --size
(a head's size; default the latest head's), of every subject or of --subject. Each envelope is
checked to hash to its leaf (RFC 6962: SHA-256(0x00 ‖ envelope)). The leaves from 0 up to a
head's size build its root; 'surety log verify' checks one audit against the chain.`))
	node := fs.nodeURL()
	subject := fs.String("subject", "", "only the audits of this DID")
	from := fs.Uint64("from", 0, "the first index")
	size := fs.Uint64("size", 0, "read below this tree size (default: the latest head's)")
	limit := fs.Int("limit", 0, "at most this many leaves in all (default: every one, page by page)")
	asJSON := fs.Bool("json", false, `print {"size", "leaves": [...], "heads": [...]}, every page's in one`)
	if err := fs.parse(args); err != nil {
		return err
	}
	if *subject != "" {
		if _, err := identity.ParseDID(*subject); err != nil {
			return usagef("--subject: %v", err)
		}
	}
	if *limit < 0 {
		return usagef("--limit must not be negative, got %d", *limit)
	}
	c, _, err := dialNode(ctx, *node)
	if err != nil {
		return err
	}
	all := wire.LeafPage{Leaves: []wire.LoggedLeaf{}, Heads: []wire.Head{}}
	named := map[int64]bool{}
	at := *from
	for {
		want := 0 // the node's page
		if *limit > 0 {
			want = *limit - len(all.Leaves)
		}
		page, err := c.LogLeaves(ctx, at, *size, *subject, min(want, reputation.MaxLeavesPage))
		if err != nil {
			return err
		}
		all.Size = page.Size
		for _, h := range page.Heads {
			if !named[h.Epoch] {
				named[h.Epoch] = true
				all.Heads = append(all.Heads, h)
				if !*asJSON {
					anchor := "not anchored"
					if h.AnchorTx != "" {
						anchor = "anchor tx " + h.AnchorTx
					}
					fmt.Fprintf(e.stdout, "head of epoch %d: size %d, root %s, %s\n", h.Epoch, h.Size, h.Root, anchor)
				}
			}
		}
		for _, x := range page.Leaves {
			if x.Envelope != nil && verify.EnvelopeLeaf(x.Envelope) != x.Leaf {
				return fmt.Errorf("NOT verified: the envelope the node serves for leaf %d hashes to %s, not %s", x.Index, verify.EnvelopeLeaf(x.Envelope), x.Leaf)
			}
			all.Leaves = append(all.Leaves, x)
			if !*asJSON {
				anchored := "not anchored yet"
				if x.AnchorEpoch != nil {
					anchored = fmt.Sprintf("anchored with epoch %d", *x.AnchorEpoch)
				}
				fmt.Fprintf(e.stdout, "leaf %d %s: epoch %d, %s, %d bytes\n", x.Index, x.Leaf, x.Epoch, anchored, len(x.Envelope))
			}
		}
		if page.Next == nil || *limit > 0 && len(all.Leaves) >= *limit {
			break
		}
		at = *page.Next
	}
	if *asJSON {
		return printJSON(e, all)
	}
	if len(all.Leaves) == 0 {
		fmt.Fprintf(e.stdout, "no leaves from %d in the log of size %d\n", *from, all.Size)
	}
	return nil
}

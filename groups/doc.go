// Package groups keeps group threads, the IoA conversation shape. A group has an id, a
// creator and members. The creator, a DID bound to a wallet on chain (Config.Bound), sets the
// members with a signed membership envelope (body kind MembersKind), and a later one from the
// creator replaces an earlier one; of two DIDs that claimed one id, the earliest claim (iat,
// then envelope hash) created the group, on every node. Members post envelopes into the
// thread: each must verify (package identity), name the group in group_id, come from a member,
// and be small (MaxPostSize); an unbound member posts while the creator that admitted it is
// bound. What a group holds counts against its creator (Quotas). The node stores posts in
// arrival order (seq 1, 2, ...) and streams them. Between nodes, membership and thread envelopes travel on Topic and are
// verified again on arrival (Service.Attach), and anti-entropy (Service.SyncSets) brings a
// node that was away up to date.
//
// It builds on identity (envelopes) and internal/p2p (gossip, anti-entropy); identity knows
// nothing of it.
package groups

package groups

import "time"

// Limits of group threads, in one place.
const (
	// MaxMembers bounds a group's membership.
	MaxMembers = 256
	// MaxPage bounds a page of a thread.
	MaxPage = 500

	// MaxPostSize bounds a thread envelope as received, signature and all: a post is text
	// and a few links; evidence goes by hash (a bounty's spec, an audit's evidence).
	MaxPostSize = 8 << 10
	// MaxMembersSize bounds a membership envelope: MaxMembers did:keys (about 57 bytes
	// each, a third more in base64) fit with room to spare.
	MaxMembersSize = 32 << 10

	// Bounds of what a node offers anti-entropy: memberships, and thread envelopes of the
	// last SyncPostsWindow (by iat), each creator's newest in turn.
	maxSyncGroups   = 50_000
	maxSyncPosts    = 100_000
	SyncPostsWindow = 7 * 24 * time.Hour
)

// Default quotas (Config.Quotas): what one identity may make a node store. Only a DID bound
// to a wallet on chain creates groups, and everything in a group counts against its creator,
// so a node holds at most DefaultGroupsPerCreator × (2 membership envelopes of
// MaxMembersSize) + DefaultPostsPerCreator × MaxPostSize per bound DID: 4 MiB + 160 MiB.
const (
	// DefaultGroupsPerCreator bounds the groups one DID creates.
	DefaultGroupsPerCreator = 64
	// DefaultPostsPerSender bounds the thread envelopes one DID posts into one group.
	DefaultPostsPerSender = 1_000
	// DefaultPostsPerCreator bounds the thread envelopes of all the groups one DID created,
	// whoever posted them.
	DefaultPostsPerCreator = 20_000
)

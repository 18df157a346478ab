package groups

import "time"

// Limits of group threads, in one place.
const (
	// MaxMembers bounds a group's membership.
	MaxMembers = 256
	// MaxPage bounds a page of a thread.
	MaxPage = 500

	// Bounds of what a node offers anti-entropy: memberships, and thread envelopes of the
	// last SyncPostsWindow (by iat).
	maxSyncGroups   = 50_000
	maxSyncPosts    = 100_000
	SyncPostsWindow = 7 * 24 * time.Hour
)

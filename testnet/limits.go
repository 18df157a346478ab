package testnet

import "time"

const (
	// DevAccounts is how many dev accounts a network's nodes hold (--dev-accounts), and so
	// the most nodes it runs: each anchors its audit log from a dev wallet of its own.
	DevAccounts = 10
	// ReadyWithin is how long a node process may take to start and answer, by default.
	ReadyWithin = 60 * time.Second
	// StopWithin is how long a signalled node may take to exit before it is killed.
	StopWithin = 20 * time.Second
	// pollEvery is how often a wait looks again.
	pollEvery = 50 * time.Millisecond
	// infoTimeout bounds one GET /v1/info while waiting for a node.
	infoTimeout = 2 * time.Second
)

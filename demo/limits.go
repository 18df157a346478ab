package demo

import "time"

// Timings of the day.
const (
	// anchorWait bounds the wait for the audit log to close the audits' epoch and anchor its
	// root on chain.
	anchorWait = 45 * time.Second
	// scoreWait bounds the wait for an audit to move its subject's score.
	scoreWait = 20 * time.Second
	// poll is how often the demo asks the node again while it waits.
	poll = 200 * time.Millisecond
	// envelopeLife is how long an envelope the parties sign stays valid.
	envelopeLife = 5 * time.Minute
	// proofLife is how long a DID's proof of possession stays valid.
	proofLife = 2 * time.Minute
	// logEpoch and logGrace are the demo node's audit log epoch and the grace after it, short
	// so that the audits are anchored within the day.
	logEpoch = time.Second
	logGrace = 3 * time.Second
)

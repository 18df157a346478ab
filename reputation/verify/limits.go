package verify

// Limits on what the package reads: heads and checkpoints come from a node the auditor does
// not trust.
const (
	// MaxHeadSize bounds a signed head's JWS (a real one is about 400 bytes).
	MaxHeadSize = 16 << 10
	// MaxCheckpointSize bounds a checkpoint note, signatures included.
	MaxCheckpointSize = 64 << 10
	// MaxNoteSignatures bounds the signature lines of a checkpoint; C2SP signed-note asks
	// verifiers to accept at least 16.
	MaxNoteSignatures = 100
)

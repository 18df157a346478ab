package identity

import "fmt"

// SignNote signs the text of a signed note (c2sp.org/signed-note: a log checkpoint) with the
// key, raw: Ed25519 over the text, or ES256K (R || S, low S) over its SHA-256. The text must
// end in a newline, as a note's does; a JWS signing input never holds one, so a signature
// made here cannot pass for a JWS by the same key, nor the other way round.
func (k *Key) SignNote(text []byte) ([]byte, error) {
	if len(text) == 0 || text[len(text)-1] != '\n' {
		return nil, fmt.Errorf("sign note: the text does not end in a newline")
	}
	s, err := signers.get(k.Algorithm())
	if err != nil {
		return nil, err
	}
	sig, err := s.Sign(text, k.Private)
	if err != nil {
		return nil, fmt.Errorf("sign note: %w", err)
	}
	return sig, nil
}

// SignNoteAsNode signs a note's text with the node's own DID key (SignNote): the API serves
// the audit log's checkpoint signed with it.
func (s *Service) SignNoteAsNode(text []byte) ([]byte, error) {
	return s.cfg.Node.SignNote(text)
}

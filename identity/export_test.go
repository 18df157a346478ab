package identity

// HeldStatusList is what the service holds of status list n: the number of the computation
// of its bits, and the list credential signed over them ("" before one was asked for).
func (s *Service) HeldStatusList(n int) (gen uint64, signed string) {
	s.status.mu.Lock()
	defer s.status.mu.Unlock()
	c := s.status.lists[n]
	return c.gen, c.signed
}

// ReplaceHeldStatusList replaces the signed list credential held for list n, so that a test
// sees whether a request is answered from what is held.
func (s *Service) ReplaceHeldStatusList(n int, signed string) {
	s.status.mu.Lock()
	defer s.status.mu.Unlock()
	c := s.status.lists[n]
	c.signed = signed
	s.status.lists[n] = c
}

//go:build !linux || !cgo

package sqlite

func setMallocArenas(int) bool { return false }

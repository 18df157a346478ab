package identity

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Bitstring Status List v1.0: a list is a bitstring of at least 131,072 bits (16 KiB, the
// spec's minimum, so one credential's bit hides among many), bit 0 the most significant bit
// of the first byte; it travels gzip-compressed, base64url-encoded without padding, behind the
// multibase prefix "u".

// NewStatusList is an all-clear bitstring of StatusListBits bits.
func NewStatusList() []byte { return make([]byte, StatusListBits/8) }

// SetStatusBit sets bit index of list.
func SetStatusBit(list []byte, index int) { list[index/8] |= 0x80 >> (index % 8) }

// StatusBit reads bit index of list; false when index is outside it.
func StatusBit(list []byte, index int) bool {
	if index < 0 || index/8 >= len(list) {
		return false
	}
	return list[index/8]&(0x80>>(index%8)) != 0
}

// EncodeStatusList compresses and encodes a bitstring as encodedList carries it. The output
// depends only on the bits (gzip header without name or time).
func EncodeStatusList(list []byte) (string, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return "", err
	}
	if _, err := zw.Write(list); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	return "u" + base64.RawURLEncoding.EncodeToString(buf.Bytes()), nil
}

// DecodeStatusList decodes an encodedList: the "u" prefix, base64url, gzip, a bitstring of
// at least StatusListBits bits and at most maxStatusListBytes bytes (more is refused, so a
// small gzip bomb costs nothing). It returns ErrCredentialStatus.
func DecodeStatusList(enc string) ([]byte, error) {
	if len(enc) > MaxCredentialSize {
		return nil, refuseCredential(ErrCredentialStatus, "encodedList is %d characters, over %d", len(enc), MaxCredentialSize)
	}
	if len(enc) == 0 || enc[0] != 'u' {
		return nil, refuseCredential(ErrCredentialStatus, "encodedList must start with the multibase prefix u (base64url)")
	}
	z, err := base64.RawURLEncoding.DecodeString(enc[1:])
	if err != nil {
		return nil, refuseCredential(ErrCredentialStatus, "encodedList: %v", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, refuseCredential(ErrCredentialStatus, "encodedList: %v", err)
	}
	zr.Multistream(false)
	list, err := io.ReadAll(io.LimitReader(zr, maxStatusListBytes+1))
	if err != nil {
		return nil, refuseCredential(ErrCredentialStatus, "encodedList: %v", err)
	}
	switch {
	case len(list) > maxStatusListBytes:
		return nil, refuseCredential(ErrCredentialStatus, "the bitstring is over %d bytes", maxStatusListBytes)
	case len(list) < StatusListBits/8:
		return nil, refuseCredential(ErrCredentialStatus, "the bitstring is %d bytes; Bitstring Status List requires at least %d", len(list), StatusListBits/8)
	}
	return list, nil
}

// StatusListCredential is the credential that publishes list at url (GET /v1/status/{n}),
// valid from now for lifetime.
func StatusListCredential(issuer, url string, list []byte, now time.Time, lifetime time.Duration) (*Credential, error) {
	enc, err := EncodeStatusList(list)
	if err != nil {
		return nil, err
	}
	c, err := NewCredential(issuer, []string{StatusListCredentialType}, now, now.Add(lifetime),
		StatusListSubject{ID: url + "#list", Type: StatusListType, StatusPurpose: StatusPurposeRevocation, EncodedList: enc})
	if err != nil {
		return nil, err
	}
	c.ID = url
	return c, nil
}

// NewStatusEntry is the credentialStatus of the credential at index of the list at url.
func NewStatusEntry(url string, index int) *StatusEntry {
	i := strconv.Itoa(index)
	return &StatusEntry{ID: url + "#" + i, Type: StatusListEntryType, StatusPurpose: StatusPurposeRevocation,
		StatusListIndex: i, StatusListCredential: url}
}

// CheckCredentialStatus reads cred's revocation bit in list, the verified credential of its
// status list: the list must be the one cred names, by cred's issuer, for revocation. A
// credential without credentialStatus passes (nothing can revoke it). It returns
// ErrCredentialRevoked when the bit is set, ErrCredentialStatus when the list is unusable.
func CheckCredentialStatus(cred, list *VerifiedCredential) error {
	st := cred.Credential.CredentialStatus
	if st == nil {
		return nil
	}
	if st.Type != StatusListEntryType || st.StatusPurpose != StatusPurposeRevocation {
		return refuseCredential(ErrCredentialStatus, "credentialStatus is %s for %q; this verifier reads %s for %s",
			st.Type, st.StatusPurpose, StatusListEntryType, StatusPurposeRevocation)
	}
	index, err := strconv.Atoi(st.StatusListIndex)
	if err != nil || index < 0 {
		return refuseCredential(ErrCredentialStatus, "statusListIndex %q is not a non-negative integer", truncate(st.StatusListIndex, 40))
	}
	if list == nil {
		return refuseCredential(ErrCredentialStatus, "no status list")
	}
	lc := &list.Credential
	switch {
	case !lc.HasType(StatusListCredentialType):
		return refuseCredential(ErrCredentialStatus, "the status list is not a %s", StatusListCredentialType)
	case lc.ID != st.StatusListCredential:
		return refuseCredential(ErrCredentialStatus, "the status list is %s; the credential names %s", truncate(lc.ID, 200), truncate(st.StatusListCredential, 200))
	case lc.Issuer != cred.Credential.Issuer:
		return refuseCredential(ErrCredentialStatus, "the status list is issued by %s, the credential by %s", lc.Issuer, cred.Credential.Issuer)
	}
	var subj StatusListSubject
	if err := list.Subject(&subj); err != nil {
		return refuseCredential(ErrCredentialStatus, "%v", err)
	}
	if subj.Type != StatusListType || subj.StatusPurpose != StatusPurposeRevocation {
		return refuseCredential(ErrCredentialStatus, "the status list is a %s for %q", subj.Type, subj.StatusPurpose)
	}
	bits, err := DecodeStatusList(subj.EncodedList)
	if err != nil {
		return err
	}
	if index >= len(bits)*8 {
		return refuseCredential(ErrCredentialStatus, "statusListIndex %d is past the list's %d bits", index, len(bits)*8)
	}
	if StatusBit(bits, index) {
		return refuseCredential(ErrCredentialRevoked, "bit %d of %s is set", index, st.StatusListCredential)
	}
	return nil
}

// statusPosition splits a position in the node's allocation into its list and index.
func statusPosition(pos int64) (list, index int) {
	return int(pos / StatusListBits), int(pos % StatusListBits)
}

// StatusListURL is the URL of list n under base (the node's public API URL).
func StatusListURL(base string, n int) string { return fmt.Sprintf("%s%s%d", base, StatusListPath, n) }

// SplitStatusListURL splits a status list URL the node wrote (StatusListURL) into its base
// and list number; ok is false for any other string.
func SplitStatusListURL(url string) (base string, n int, ok bool) {
	i := strings.LastIndex(url, StatusListPath)
	if i < 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(url[i+len(StatusListPath):])
	if err != nil || n < 0 || n >= MaxStatusLists {
		return "", 0, false
	}
	return url[:i], n, true
}

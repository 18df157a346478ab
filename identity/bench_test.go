package identity

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/sha256"
	"testing"
	"time"

	ethcrypto "github.com/ethereum/go-ethereum/crypto"
)

// The envelope benchmarks run beside the raw signature primitive on the same payload, so
// one `go test -bench Envelope` shows the ratio the identity issue targets (>= 0.85 of raw
// throughput for sign and verify, EdDSA against crypto/ed25519, ES256K against
// go-ethereum's secp256k1).

func benchPayload(b *testing.B, k *Key) []byte {
	p, err := FillEnvelope(payloadFor(b, k, nil), k, testNow, 5*time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func BenchmarkEnvelopeSign(b *testing.B) {
	for _, typ := range []KeyType{Ed25519, Secp256k1} {
		k := testKey(b, typ, 20)
		payload := benchPayload(b, k)
		input := []byte(k.protectedHeader() + "." + b64.EncodeToString(payload)) // what raw signing signs
		b.Run(string(typ)+"/raw", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rawSign(b, k, input)
			}
		})
		b.Run(string(typ)+"/envelope", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := k.SignCompact(payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func rawSign(b *testing.B, k *Key, input []byte) []byte {
	switch p := k.Private.(type) {
	case ed25519.PrivateKey:
		return ed25519.Sign(p, input)
	case *ecdsa.PrivateKey:
		h := sha256.Sum256(input)
		sig, err := ethcrypto.Sign(h[:], p)
		if err != nil {
			b.Fatal(err)
		}
		return sig
	}
	b.Fatal("unknown key")
	return nil
}

func BenchmarkEnvelopeVerify(b *testing.B) {
	for _, typ := range []KeyType{Ed25519, Secp256k1} {
		k := testKey(b, typ, 21)
		b.Run(string(typ)+"/raw", func(b *testing.B) {
			payload := benchPayload(b, k)
			input := []byte(k.protectedHeader() + "." + b64.EncodeToString(payload))
			sig := rawSign(b, k, input)
			pub := k.Private.Public()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				switch p := pub.(type) {
				case ed25519.PublicKey:
					if !ed25519.Verify(p, input, sig) {
						b.Fatal("raw verify failed")
					}
				case *ecdsa.PublicKey:
					h := sha256.Sum256(input)
					if !ethcrypto.VerifySignature(ethcrypto.CompressPubkey(p), h[:], sig[:64]) {
						b.Fatal("raw verify failed")
					}
				}
			}
		})
		b.Run(string(typ)+"/envelope", func(b *testing.B) {
			// Every envelope has a fresh nonce, so the replay check does real work; the
			// signer's key comes from the verifier's cache after the first.
			envs := make([][]byte, b.N)
			for i := range envs {
				s, err := k.SignCompact(benchPayload(b, k))
				if err != nil {
					b.Fatal(err)
				}
				envs[i] = []byte(s)
			}
			now := testNow
			v := NewVerifier(VerifierConfig{Started: testNow.Add(-time.Hour), Now: func() time.Time { return now }, MaxNonces: b.N + 1})
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := v.Verify(ctx, envs[i]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

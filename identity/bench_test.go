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

// BenchmarkEnvelopeVsRaw measures each envelope operation beside the raw signature primitive
// on the same input (EdDSA against crypto/ed25519, ES256K against go-ethereum's secp256k1):
// one of each per iteration, in alternating order, each timed on its own, so the drift of a
// shared machine weighs on both alike. It reports envelope-ns and raw-ns, the mean time of
// each; the identity issue's target is envelope throughput >= 0.85 of raw, that is
// envelope-ns <= raw-ns / 0.85.
//
// Raw verification takes the key as the DID carries it (32 bytes for Ed25519, 33 compressed
// for secp256k1), as a caller holding only the DID would. The verifier caches each DID's key:
// for secp256k1 uncompressed, which spares the square root libsecp256k1 otherwise spends on
// every signature (about 3 µs of some 40 here).
func BenchmarkEnvelopeVsRaw(b *testing.B) {
	for _, typ := range []KeyType{Ed25519, Secp256k1} {
		b.Run("sign/"+string(typ), func(b *testing.B) {
			k := testKey(b, typ, 20)
			payload := benchPayload(b, k)
			input := []byte(k.protectedHeader() + "." + b64.EncodeToString(payload)) // what raw signing signs
			pairs(b, func() {
				rawSign(b, k, input)
			}, func() {
				if _, err := k.SignCompact(payload); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run("verify/"+string(typ), func(b *testing.B) {
			k := testKey(b, typ, 21)
			payload := benchPayload(b, k)
			input := []byte(k.protectedHeader() + "." + b64.EncodeToString(payload))
			sig := rawSign(b, k, input)
			pub := k.Private.Public()
			// A pool of envelopes, each with its own nonce, so the replay check does real
			// work; a fresh verifier (an empty replay cache) takes over each time the pool
			// comes round again. The signer's key comes from the verifier's cache after the
			// first.
			const pool = 1024
			envs := make([][]byte, pool)
			for i := range envs {
				s, err := k.SignCompact(benchPayload(b, k))
				if err != nil {
					b.Fatal(err)
				}
				envs[i] = []byte(s)
			}
			verifier := func() *Verifier {
				return NewVerifier(VerifierConfig{Started: testNow.Add(-time.Hour), Now: func() time.Time { return testNow }, MaxNonces: pool + 1})
			}
			v, ctx, next := verifier(), context.Background(), 0
			pairs(b, func() {
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
			}, func() {
				if next == pool {
					v, next = verifier(), 0 // inside the timing: one allocation per 1024 envelopes
				}
				if _, err := v.Verify(ctx, envs[next]); err != nil {
					b.Fatal(err)
				}
				next++
			})
		})
	}
}

// pairs runs raw and envelope once per iteration, alternating which goes first, and reports
// the mean time of each as raw-ns and envelope-ns.
func pairs(b *testing.B, raw, envelope func()) {
	var rawTime, envTime time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		first, second, t1, t2 := raw, envelope, &rawTime, &envTime
		if i%2 == 1 {
			first, second, t1, t2 = envelope, raw, &envTime, &rawTime
		}
		start := time.Now()
		first()
		mid := time.Now()
		second()
		end := time.Now()
		*t1 += mid.Sub(start)
		*t2 += end.Sub(mid)
	}
	b.ReportMetric(float64(rawTime.Nanoseconds())/float64(b.N), "raw-ns")
	b.ReportMetric(float64(envTime.Nanoseconds())/float64(b.N), "envelope-ns")
}

func benchPayload(b *testing.B, k *Key) []byte {
	p, err := FillEnvelope(payloadFor(b, k, nil), k, testNow, 5*time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	return p
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

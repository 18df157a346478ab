// Byte encodings Surety's signed objects use: base64url without padding (JWS), base58btc
// (did:key multibase), unsigned varints (multicodec prefixes) and hex.

const B64URL = /^[A-Za-z0-9_-]*$/;

/** b64url encodes bytes as base64url without padding (RFC 7515 §2). */
export function b64url(data: Uint8Array | string): string {
  const buf = typeof data === "string" ? Buffer.from(data, "utf8") : Buffer.from(data);
  return buf.toString("base64url");
}

/**
 * unb64url decodes base64url strictly: no padding, no other alphabet, and no stray bits in
 * the last character (a changed trailing character must not decode to the same bytes, as
 * Go's RawURLEncoding.Strict refuses it).
 */
export function unb64url(s: string): Uint8Array {
  if (!B64URL.test(s) || s.length % 4 === 1) {
    throw new Error("not base64url");
  }
  const out = Buffer.from(s, "base64url");
  if (out.toString("base64url") !== s) {
    throw new Error("not canonical base64url");
  }
  return new Uint8Array(out);
}

const B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const B58MAP = new Map([...B58].map((c, i) => [c, i]));

/** base58 encodes bytes in the Bitcoin alphabet (base58btc). */
export function base58Encode(data: Uint8Array): string {
  let zeros = 0;
  while (zeros < data.length && data[zeros] === 0) zeros++;
  const digits: number[] = [];
  for (let i = zeros; i < data.length; i++) {
    let carry = data[i];
    for (let j = 0; j < digits.length; j++) {
      carry += digits[j] << 8;
      digits[j] = carry % 58;
      carry = (carry / 58) | 0;
    }
    while (carry > 0) {
      digits.push(carry % 58);
      carry = (carry / 58) | 0;
    }
  }
  let s = "1".repeat(zeros);
  for (let i = digits.length - 1; i >= 0; i--) s += B58[digits[i]];
  return s;
}

/** base58Decode decodes base58btc; it throws on a character outside the alphabet. */
export function base58Decode(s: string): Uint8Array {
  let zeros = 0;
  while (zeros < s.length && s[zeros] === "1") zeros++;
  const bytes: number[] = [];
  for (let i = zeros; i < s.length; i++) {
    const v = B58MAP.get(s[i]);
    if (v === undefined) throw new Error("not valid base58btc");
    let carry = v;
    for (let j = 0; j < bytes.length; j++) {
      carry += bytes[j] * 58;
      bytes[j] = carry & 0xff;
      carry >>= 8;
    }
    while (carry > 0) {
      bytes.push(carry & 0xff);
      carry >>= 8;
    }
  }
  const out = new Uint8Array(zeros + bytes.length);
  for (let i = 0; i < bytes.length; i++) out[zeros + i] = bytes[bytes.length - 1 - i];
  return out;
}

/** varintEncode is the unsigned LEB128 varint of n (multicodec prefixes). */
export function varintEncode(n: number): Uint8Array {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return new Uint8Array(out);
}

/** varintDecode reads an unsigned varint; it returns the value and its length in bytes. */
export function varintDecode(b: Uint8Array): [value: number, length: number] {
  let v = 0;
  let mul = 1;
  for (let i = 0; i < b.length && i < 9; i++) {
    v += (b[i] & 0x7f) * mul;
    if ((b[i] & 0x80) === 0) return [v, i + 1];
    mul *= 128;
  }
  throw new Error("no multicodec prefix");
}

/** hex is the lowercase hex of bytes, without 0x. */
export function hex(b: Uint8Array): string {
  return Buffer.from(b).toString("hex");
}

/** unhex decodes hex with or without 0x; it throws on odd length or a non-hex digit. */
export function unhex(s: string): Uint8Array {
  const h = s.startsWith("0x") || s.startsWith("0X") ? s.slice(2) : s;
  if (h.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(h)) throw new Error(`not hex: ${s.slice(0, 20)}`);
  return new Uint8Array(Buffer.from(h, "hex"));
}

/** utf8 encodes a string. */
export function utf8(s: string): Uint8Array {
  return new Uint8Array(Buffer.from(s, "utf8"));
}

/** concat joins byte arrays. */
export function concat(...parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

/** equalBytes compares two byte arrays. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a).equals(Buffer.from(b));
}

/**
 * goJSON is JSON.stringify as Go's encoding/json writes it: <, > and & in strings escaped as
 * \u003c, \u003e, \u0026, and U+2028, U+2029 as \u2028, \u2029 (outside strings JSON has none
 * of these characters). The same object then signs to the same bytes in Go and here.
 */
export function goJSON(v: unknown): string {
  return JSON.stringify(v)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

// The shell's pure helpers: the router's parsing, amounts in base units, query strings and
// agent links. Run by make test-explorer-lib (node --test).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentHref, enc, fixed, q, short, time, units } from '../src/lib/api.js';
import { parseRoute } from '../src/lib/route.js';

const routes = { agents: null, agent: 'did', log: null, bounty: 'id' };

test('parseRoute', () => {
  const did = 'did:key:z6MkoAEGPMLPhV5oxiZufoBLscWqFu3WpG8da9QoUSRETo4X';
  for (const [hash, want] of [
    ['', { name: null, params: {} }],
    ['#/agents', { name: 'agents', params: {} }],
    ['#/agents?q=audit%20smart+contracts', { name: 'agents', params: { q: 'audit smart contracts' } }],
    [`#/agent/${did}`, { name: 'agent', params: { did } }],
    [`#/agent/${encodeURIComponent(did)}`, { name: 'agent', params: { did } }],
    ['#/agent/%E0%A4%A', { name: 'agent', params: { did: '%E0%A4%A' } }], // not decodable: kept as typed
    ['#/bounty/445485961433826?x=1', { name: 'bounty', params: { id: '445485961433826', x: '1' } }],
    ['#/log?leaf=ab', { name: 'log', params: { leaf: 'ab' } }],
    ['#/nowhere', { name: null, params: {} }],
    ['#/__proto__', { name: null, params: {} }],
    ['#/constructor/x', { name: null, params: {} }],
  ]) {
    assert.deepEqual(parseRoute(hash, routes), want, hash);
  }
});

test('units: base units as whole tokens, exactly', () => {
  for (const [base, token, want] of [
    ['3000000000000000000', undefined, '3 ETH'],
    ['100000000000000000', '0x0000000000000000000000000000000000000000', '0.1 ETH'],
    ['1', undefined, '0.000000… ETH'],
    ['995000000000000000', undefined, '0.995 ETH'],
    ['123456789012345678901234567890', undefined, '123456789012.345678… ETH'],
    ['0', undefined, '0 ETH'],
    ['-2500000000000000000', undefined, '-2.5 ETH'],
    ['5000000000000000000', '0x5FbDB2315678afecb367f032d93F642f64180aa3', '5 tokens of 0x5FbD…0aa3'],
    ['', undefined, '—'],
    ['nonsense', undefined, 'nonsense'],
  ]) {
    assert.equal(units(base, token), want, `${base} ${token}`);
  }
});

test('fixed, short, q', () => {
  assert.equal(fixed(0.70622369), '0.7062');
  assert.equal(fixed(NaN), '—');
  assert.equal(fixed(undefined), '—');
  assert.equal(short('0123456789abcdefghijklmnop', 6), '012345…mnop');
  assert.equal(short('short', 6), 'short');
  assert.equal(q({ q: 'a b', limit: 50, empty: '', none: undefined }), '?q=a+b&limit=50');
  assert.equal(q({}), '');
});

test('agentHref keeps a DID as written and escapes anything else', () => {
  assert.equal(agentHref('did:pkh:eip155:1337:0xabc'), '#/agent/did:pkh:eip155:1337:0xabc');
  assert.equal(agentHref('did:x:a b#c'), '#/agent/did%3Ax%3Aa%20b%23c');
});

test('enc keeps a DID as written in a path, escapes anything else', () => {
  assert.equal(enc('did:key:z6MkoAEGPMLPhV5oxiZufoBLscWqFu3WpG8da9QoUSRETo4X'), 'did:key:z6MkoAEGPMLPhV5oxiZufoBLscWqFu3WpG8da9QoUSRETo4X');
  assert.equal(enc('did:pkh:eip155:1337:0xAbC'), 'did:pkh:eip155:1337:0xAbC');
  assert.equal(enc('a/b?c#d e'), 'a%2Fb%3Fc%23d%20e');
});

test('time: unix seconds as UTC, and a time no Date holds as given, never a throw', () => {
  assert.equal(time(1764000000), '2025-11-24 16:00:00Z');
  assert.equal(time('1764000000'), '2025-11-24 16:00:00Z');
  assert.equal(time(8640000000000), '+275760-09-13 00:00:00Z');
  for (const [x, want] of [[0, '—'], ['0', '—'], [undefined, '—'], [null, '—'], ['', '—'],
    [8640000000001, '8640000000001'], ['18446744073709551615', '18446744073709551615'], [18446744073709551615, '18446744073709552000'],
    [Infinity, 'Infinity'], [NaN, 'NaN'], ['soon', 'soon'], [{}, '[object Object]']]) {
    assert.equal(time(x), want, String(x));
  }
});

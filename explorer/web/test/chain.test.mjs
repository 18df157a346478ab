// lib/chain.js: amounts, keccak-256, and StakeRegistry's lock events decoded from a receipt.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { amount, keccak, POSTED, postedSpecHashOf, stakeEventsOf, topic } from '../src/lib/chain.js';

test('amounts in base units read as ETH or token units', () => {
  assert.equal(amount('1000000000000000000'), '1 ETH');
  assert.equal(amount('995000000000000000', '0x0000000000000000000000000000000000000000'), '0.995 ETH');
  assert.equal(amount('1'), '0.000000… ETH');
  assert.equal(amount('2500000000000000000', '0x5FbDB2315678afecb367f032d93F642f64180aa3'), '2.5 of token 0x5FbDB2…0aa3');
  assert.equal(amount('x'), 'x');
});

test("topics are the contract's event ids (go-ethereum's ABI of IStakeRegistry)", () => {
  assert.equal(keccak(''), '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
  assert.equal(topic('Locked(bytes32,address,uint256,uint256)'), '0xdf2e2e7aa6b638c5d0a96f8d12095a2e11f9004b7efadef9e34cedfe789399fb');
  assert.equal(topic('Unlocked(bytes32,address,uint256,uint256)'), '0x70286758974597c595b4e2eac95e91fea5f26224326821b50f23314ece691a24');
  assert.equal(topic('Slashed(bytes32,address,uint256,address,bytes32)'), '0x7b8f17db347ab0a1c955155ead57b2a1f064365aa3f9f697ab37dd02ee530a88');
});

test('lock events of one bounty are read from a receipt, others left out', () => {
  const registry = '0xa16E02E87b7454126E5E10d957A927A7F5B5d2be';
  const word = (x) => BigInt(x).toString(16).padStart(64, '0');
  const agent = `0x${'ab'.repeat(32)}`;
  const controller = `0x${'0'.repeat(24)}${'3c44cdddb6a900fa2b585dd299e03d12fa4293bc'}`;
  const id = 3681248554466789n;
  const receipt = {
    logs: [
      { address: registry, topics: [topic('Locked(bytes32,address,uint256,uint256)'), agent, controller, `0x${word(id)}`], data: `0x${word(10n ** 17n)}` },
      { address: registry, topics: [topic('Locked(bytes32,address,uint256,uint256)'), agent, controller, `0x${word(id + 1n)}`], data: `0x${word(1)}` },
      { address: '0x5FbDB2315678afecb367f032d93F642f64180aa3', topics: [topic('Locked(bytes32,address,uint256,uint256)'), agent, controller, `0x${word(id)}`], data: `0x${word(1)}` },
      { address: registry.toLowerCase(), topics: [topic('Slashed(bytes32,address,uint256,address,bytes32)'), agent, controller],
        data: `0x${word(5n * 10n ** 16n)}${'0'.repeat(24)}70997970c51812dc3a010c7d01b50e0d17dc79c8${word(id)}` },
    ],
  };
  assert.deepEqual(stakeEventsOf(receipt, registry, String(id)), [
    { name: 'Locked', agentId: agent, controller: '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc', amount: '100000000000000000', beneficiary: undefined },
    { name: 'Slashed', agentId: agent, controller: '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc', amount: '50000000000000000', beneficiary: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8' },
  ]);
  assert.deepEqual(stakeEventsOf(null, registry, id), []);
});

test("the Posted event's specHash is read from a receipt, for its escrow and bounty only", () => {
  // go-ethereum's ID of BountyEscrow's Posted event (contracts.NewBountyEscrow().GetABI()).
  assert.equal(POSTED, '0x90e89c47f6940dc5d339ad7b71c96ce09d868d3a1828db5e580ecad9293d1d72');
  const escrow = '0xE7f1725E7734CE288F8367e1Bb143E90bb3F0512';
  const word = (x) => BigInt(x).toString(16).padStart(64, '0');
  const spec = keccak('the task');
  const data = (h) => `0x${[1, 2, 3, 4, 5, 6, 7, 8].map(word).join('')}${h.slice(2)}`;
  const log = (address, id, h) => ({ address, topics: [POSTED, `0x${word(id)}`, `0x${word(1)}`, `0x${word(0)}`], data: data(h) });
  const other = keccak('another task');
  const receipt = { logs: [log('0x0000000000000000000000000000000000000001', 7, other), log(escrow, 8, other), log(escrow.toLowerCase(), 7, spec)] };
  assert.equal(postedSpecHashOf(receipt, escrow, 7), spec);
  assert.equal(postedSpecHashOf(receipt, escrow, '8'), other);
  assert.equal(postedSpecHashOf(receipt, escrow, 9), null);
  assert.equal(postedSpecHashOf({ logs: [{ ...log(escrow, 7, spec), data: '0x12' }] }, escrow, 7), null);
  assert.equal(postedSpecHashOf(null, escrow, 7), null);
});

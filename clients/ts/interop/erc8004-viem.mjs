// erc8004-viem.mjs: an independent client of Surety's ERC-8004 registries. viem, with a
// human-readable ABI written from the ERC-8004 specification (not from Surety's artifacts),
// registers an agent, has a second wallet sign the EIP-712 AgentWalletSet consent with viem's
// own typed-data signer and sets it as the agent's wallet, gives the agent feedback from a
// third wallet, and reads everything back from the chain.
//
//   node erc8004-viem.mjs INPUT.json
//
// INPUT.json: {"rpc": "http://127.0.0.1:8545", "chainId": 31337, "identity": "0x…",
// "reputation": "0x…", "owner": "0x<key>", "wallet": "0x<key>", "client": "0x<key>",
// "agentURI": "…", "did": "did:…", "feedback": {"value": "8000", "valueDecimals": 2, "tag1": "…",
// "tag2": "…", "endpoint": "…", "feedbackURI": "…", "feedbackHash": "0x…"}}. Prints one JSON
// line with what it did and read; exits 1 with {"error": "..."} when anything fails.
import {readFileSync} from 'node:fs';
import {createPublicClient, createWalletClient, http, parseAbi, parseEventLogs, toHex, hexToString, defineChain} from 'viem';
import {privateKeyToAccount} from 'viem/accounts';

// The standard's functions and events, as ERC-8004 writes them.
const identityAbi = parseAbi([
  'struct MetadataEntry { string metadataKey; bytes metadataValue; }',
  'function register(string agentURI, MetadataEntry[] metadata) returns (uint256 agentId)',
  'function register(string agentURI) returns (uint256 agentId)',
  'function register() returns (uint256 agentId)',
  'function setAgentURI(uint256 agentId, string newURI)',
  'function getMetadata(uint256 agentId, string metadataKey) view returns (bytes)',
  'function setMetadata(uint256 agentId, string metadataKey, bytes metadataValue)',
  'function setAgentWallet(uint256 agentId, address newWallet, uint256 deadline, bytes signature)',
  'function getAgentWallet(uint256 agentId) view returns (address)',
  'function ownerOf(uint256 tokenId) view returns (address)',
  'function tokenURI(uint256 tokenId) view returns (string)',
  'event Registered(uint256 indexed agentId, string agentURI, address indexed owner)',
  'event MetadataSet(uint256 indexed agentId, string indexed indexedMetadataKey, string metadataKey, bytes metadataValue)',
  'event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)',
]);
const reputationAbi = parseAbi([
  'function getIdentityRegistry() view returns (address)',
  'function giveFeedback(uint256 agentId, int128 value, uint8 valueDecimals, string tag1, string tag2, string endpoint, string feedbackURI, bytes32 feedbackHash)',
  'function readFeedback(uint256 agentId, address clientAddress, uint64 feedbackIndex) view returns (int128 value, uint8 valueDecimals, string tag1, string tag2, bool isRevoked)',
  'function getSummary(uint256 agentId, address[] clientAddresses, string tag1, string tag2) view returns (uint64 count, int128 summaryValue, uint8 summaryValueDecimals)',
  'function getClients(uint256 agentId) view returns (address[])',
  'function getLastIndex(uint256 agentId, address clientAddress) view returns (uint64)',
  'event NewFeedback(uint256 indexed agentId, address indexed clientAddress, uint64 feedbackIndex, int128 value, uint8 valueDecimals, string indexed indexedTag1, string tag1, string tag2, string endpoint, string feedbackURI, bytes32 feedbackHash)',
]);

async function main() {
  const input = JSON.parse(readFileSync(process.argv[2], 'utf8'));
  const chain = defineChain({id: input.chainId, name: 'surety-devnet', nativeCurrency: {name: 'Ether', symbol: 'ETH', decimals: 18},
    rpcUrls: {default: {http: [input.rpc]}}});
  const pub = createPublicClient({chain, transport: http(input.rpc)});
  const owner = privateKeyToAccount(input.owner);
  const wallet = privateKeyToAccount(input.wallet);
  const client = privateKeyToAccount(input.client);
  const as = (account) => createWalletClient({account, chain, transport: http(input.rpc)});
  const mined = async (hash) => {
    const r = await pub.waitForTransactionReceipt({hash});
    if (r.status !== 'success') throw new Error(`transaction ${hash} reverted`);
    return r;
  };

  if ((await pub.readContract({address: input.reputation, abi: reputationAbi, functionName: 'getIdentityRegistry'})).toLowerCase() !== input.identity.toLowerCase()) {
    throw new Error('the reputation registry names another identity registry');
  }

  // register(agentURI, [{did}]) from the owner; the id comes from the Registered event.
  const reg = await mined(await as(owner).writeContract({address: input.identity, abi: identityAbi, functionName: 'register',
    args: [input.agentURI, [{metadataKey: 'did', metadataValue: toHex(input.did)}]]}));
  const registered = parseEventLogs({abi: identityAbi, logs: reg.logs, eventName: 'Registered'});
  if (registered.length !== 1) throw new Error(`${registered.length} Registered events`);
  const agentId = registered[0].args.agentId;

  // The wallet consents (EIP-712, signed by viem), the owner sets it.
  const block = await pub.getBlock();
  const deadline = block.timestamp + 120n;
  const signature = await wallet.signTypedData({
    domain: {name: 'ERC8004IdentityRegistry', version: '1', chainId: input.chainId, verifyingContract: input.identity},
    types: {AgentWalletSet: [{name: 'agentId', type: 'uint256'}, {name: 'newWallet', type: 'address'}, {name: 'owner', type: 'address'}, {name: 'deadline', type: 'uint256'}]},
    primaryType: 'AgentWalletSet',
    message: {agentId, newWallet: wallet.address, owner: owner.address, deadline},
  });
  await mined(await as(owner).writeContract({address: input.identity, abi: identityAbi, functionName: 'setAgentWallet',
    args: [agentId, wallet.address, deadline, signature]}));

  // Feedback from the client; its index comes from the NewFeedback event.
  const f = input.feedback;
  const fr = await mined(await as(client).writeContract({address: input.reputation, abi: reputationAbi, functionName: 'giveFeedback',
    args: [agentId, BigInt(f.value), f.valueDecimals, f.tag1, f.tag2, f.endpoint, f.feedbackURI, f.feedbackHash]}));
  const fed = parseEventLogs({abi: reputationAbi, logs: fr.logs, eventName: 'NewFeedback'});
  if (fed.length !== 1) throw new Error(`${fed.length} NewFeedback events`);

  const read = (address, abi, functionName, args) => pub.readContract({address, abi, functionName, args});
  const [value, valueDecimals, tag1, tag2, isRevoked] = await read(input.reputation, reputationAbi, 'readFeedback', [agentId, client.address, fed[0].args.feedbackIndex]);
  const [count, summaryValue, summaryValueDecimals] = await read(input.reputation, reputationAbi, 'getSummary', [agentId, [client.address], '', '']);
  const out = {
    agentId: agentId.toString(),
    owner: await read(input.identity, identityAbi, 'ownerOf', [agentId]),
    agentURI: await read(input.identity, identityAbi, 'tokenURI', [agentId]),
    did: hexToString(await read(input.identity, identityAbi, 'getMetadata', [agentId, 'did'])),
    agentWallet: await read(input.identity, identityAbi, 'getAgentWallet', [agentId]),
    feedbackIndex: fed[0].args.feedbackIndex.toString(),
    feedbackBlock: fr.blockNumber.toString(),
    event: {value: fed[0].args.value.toString(), valueDecimals: fed[0].args.valueDecimals, tag1: fed[0].args.tag1, feedbackURI: fed[0].args.feedbackURI, feedbackHash: fed[0].args.feedbackHash},
    stored: {value: value.toString(), valueDecimals, tag1, tag2, isRevoked},
    summary: {count: count.toString(), value: summaryValue.toString(), valueDecimals: summaryValueDecimals},
    clients: await read(input.reputation, reputationAbi, 'getClients', [agentId]),
  };
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.log(JSON.stringify({error: String(e?.shortMessage ?? e?.message ?? e)}));
  process.exit(1);
});

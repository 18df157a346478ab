// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {ERC721} from "./ERC721.sol";
import {IIdentityRegistry} from "./IIdentityRegistry.sol";

/// @title IERC1271
/// @notice A contract wallet's signature check (ERC-1271).
interface IERC1271 {
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4 magicValue);
}

/// @title IdentityRegistry
/// @notice ERC-8004's Identity Registry, written for Surety from the specification. Agent ids
/// count up from 0 (as the reference's do). Registering mints the agent to the caller, sets its
/// agentURI (when given) and its agent wallet to the caller, and emits Transfer, Registered,
/// MetadataSet("agentWallet") and one MetadataSet per extra entry, in that order. The wallet
/// changes only with the new wallet's signature over the EIP-712 struct
/// AgentWalletSet(uint256 agentId,address newWallet,address owner,uint256 deadline) in the domain
/// ("ERC8004IdentityRegistry", "1", chain id, this contract), the reference's, so a signature an
/// ERC-8004 SDK makes for the reference verifies here; a transfer clears it. Not upgradeable:
/// no proxy, no owner, no initializer (the reference is a UUPS proxy; Surety deploys a fresh
/// registry per deployment and never needs to migrate one).
contract IdentityRegistry is ERC721, IIdentityRegistry {
    /// @notice The EIP-712 type of the wallet's consent.
    bytes32 public constant AGENT_WALLET_SET_TYPEHASH =
        keccak256("AgentWalletSet(uint256 agentId,address newWallet,address owner,uint256 deadline)");
    /// @notice How far ahead a wallet signature's deadline may be.
    uint256 public constant MAX_DEADLINE_DELAY = 5 minutes;

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant NAME_HASH = keccak256("ERC8004IdentityRegistry");
    bytes32 private constant VERSION_HASH = keccak256("1");
    bytes32 private constant AGENT_WALLET_KEY_HASH = keccak256("agentWallet");
    string private constant AGENT_WALLET_KEY = "agentWallet";
    /// @dev secp256k1's n / 2: signatures with a larger s are malleable copies, refused.
    uint256 private constant HALF_N = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    uint256 private immutable _deployChainId;
    bytes32 private immutable _deployDomainSeparator;

    uint256 private _nextId;
    mapping(uint256 agentId => string) private _agentURIs;
    mapping(uint256 agentId => mapping(string key => bytes)) private _metadata;
    mapping(uint256 agentId => address) private _agentWallets;

    constructor() {
        _deployChainId = block.chainid;
        _deployDomainSeparator = _domainSeparator();
    }

    // --- ERC-721 metadata ---

    function name() external pure returns (string memory) {
        return "AgentIdentity";
    }

    function symbol() external pure returns (string memory) {
        return "AGENT";
    }

    /// @notice The agentURI: where the agent's registration file is ("" until one is set).
    function tokenURI(uint256 agentId) external view returns (string memory) {
        ownerOf(agentId);
        return _agentURIs[agentId];
    }

    /// @notice ERC-165, adding ERC-4906 (metadata update events) to ERC-721's.
    function supportsInterface(bytes4 interfaceId) public view override returns (bool) {
        return interfaceId == 0x49064906 || super.supportsInterface(interfaceId);
    }

    // --- registration ---

    function register() external returns (uint256 agentId) {
        agentId = _register("");
        _checkReceiver(msg.sender, address(0), msg.sender, agentId, "");
    }

    function register(string calldata agentURI) external returns (uint256 agentId) {
        agentId = _register(agentURI);
        _checkReceiver(msg.sender, address(0), msg.sender, agentId, "");
    }

    function register(string calldata agentURI, MetadataEntry[] calldata metadata) external returns (uint256 agentId) {
        agentId = _register(agentURI);
        for (uint256 i; i < metadata.length; ++i) {
            _setMetadata(agentId, metadata[i].metadataKey, metadata[i].metadataValue);
        }
        _checkReceiver(msg.sender, address(0), msg.sender, agentId, "");
    }

    function _register(string memory agentURI) private returns (uint256 agentId) {
        agentId = _nextId++;
        _mint(msg.sender, agentId);
        if (bytes(agentURI).length != 0) _agentURIs[agentId] = agentURI;
        _agentWallets[agentId] = msg.sender;
        emit Registered(agentId, agentURI, msg.sender);
        emit MetadataSet(agentId, AGENT_WALLET_KEY, AGENT_WALLET_KEY, abi.encodePacked(msg.sender));
    }

    function setAgentURI(uint256 agentId, string calldata newURI) external {
        _authorize(agentId);
        _agentURIs[agentId] = newURI;
        emit URIUpdated(agentId, newURI, msg.sender);
        emit MetadataUpdate(agentId);
    }

    // --- metadata ---

    /// @notice The value under `metadataKey` ("" when unset); "agentWallet" reads the wallet's
    /// 20 bytes (or "" when cleared).
    function getMetadata(uint256 agentId, string calldata metadataKey) external view returns (bytes memory) {
        if (keccak256(bytes(metadataKey)) == AGENT_WALLET_KEY_HASH) {
            address wallet = _agentWallets[agentId];
            return wallet == address(0) ? bytes("") : abi.encodePacked(wallet);
        }
        return _metadata[agentId][metadataKey];
    }

    function setMetadata(uint256 agentId, string calldata metadataKey, bytes calldata metadataValue) external {
        _authorize(agentId);
        _setMetadata(agentId, metadataKey, metadataValue);
    }

    function _setMetadata(uint256 agentId, string calldata key, bytes calldata value) private {
        if (keccak256(bytes(key)) == AGENT_WALLET_KEY_HASH) revert ReservedMetadataKey(key);
        _metadata[agentId][key] = value;
        emit MetadataSet(agentId, key, key, value);
    }

    // --- agent wallet ---

    function getAgentWallet(uint256 agentId) external view returns (address) {
        return _agentWallets[agentId];
    }

    /// @notice Sets the agent's wallet to `newWallet`, which consents by signing
    /// AgentWalletSet(agentId, newWallet, owner, deadline): an ECDSA signature of its key (65
    /// bytes, or 64 in EIP-2098's compact form; low s only), or, for a contract, an ERC-1271
    /// answer. The deadline is at most MAX_DEADLINE_DELAY ahead, so a signature lives minutes.
    function setAgentWallet(uint256 agentId, address newWallet, uint256 deadline, bytes calldata signature) external {
        address owner = _authorize(agentId);
        if (newWallet == address(0)) revert ZeroWallet();
        if (block.timestamp > deadline) revert SignatureExpired(deadline);
        if (deadline > block.timestamp + MAX_DEADLINE_DELAY) revert DeadlineTooFar(deadline);
        bytes32 digest = keccak256(
            abi.encodePacked(
                "\x19\x01",
                domainSeparator(),
                keccak256(abi.encode(AGENT_WALLET_SET_TYPEHASH, agentId, newWallet, owner, deadline))
            )
        );
        if (!_validSignature(newWallet, digest, signature)) revert InvalidWalletSignature(newWallet);
        _agentWallets[agentId] = newWallet;
        emit MetadataSet(agentId, AGENT_WALLET_KEY, AGENT_WALLET_KEY, abi.encodePacked(newWallet));
    }

    function unsetAgentWallet(uint256 agentId) external {
        _authorize(agentId);
        delete _agentWallets[agentId];
        emit MetadataSet(agentId, AGENT_WALLET_KEY, AGENT_WALLET_KEY, "");
    }

    /// @notice A transfer clears the agent wallet: the new owner must prove a wallet again.
    function _beforeTransfer(address, address, uint256 tokenId) internal override {
        delete _agentWallets[tokenId];
        emit MetadataSet(tokenId, AGENT_WALLET_KEY, AGENT_WALLET_KEY, "");
    }

    function isAuthorizedOrOwner(address spender, uint256 agentId) external view returns (bool) {
        return _isAuthorized(ownerOf(agentId), spender, agentId);
    }

    function _authorize(uint256 agentId) private view returns (address owner) {
        owner = ownerOf(agentId);
        if (!_isAuthorized(owner, msg.sender, agentId)) revert NotAuthorized(msg.sender, agentId);
    }

    // --- EIP-712 ---

    /// @notice The EIP-712 domain separator (recomputed if the chain forked since deployment).
    function domainSeparator() public view returns (bytes32) {
        return block.chainid == _deployChainId ? _deployDomainSeparator : _domainSeparator();
    }

    /// @notice ERC-5267: the EIP-712 domain, for wallets and SDKs that build the typed data.
    function eip712Domain()
        external
        view
        returns (
            bytes1 fields,
            string memory name_,
            string memory version,
            uint256 chainId,
            address verifyingContract,
            bytes32 salt,
            uint256[] memory extensions
        )
    {
        return (hex"0f", "ERC8004IdentityRegistry", "1", block.chainid, address(this), bytes32(0), new uint256[](0));
    }

    function _domainSeparator() private view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, VERSION_HASH, block.chainid, address(this)));
    }

    /// @notice Whether `signature` is `signer`'s over `digest`: its ECDSA key's, or else (when
    /// `signer` has code: a contract, or an EIP-7702 account) its ERC-1271 answer.
    function _validSignature(address signer, bytes32 digest, bytes calldata signature) private view returns (bool) {
        if (_recover(digest, signature) == signer) return true;
        if (signer.code.length == 0) return false;
        bytes memory data = abi.encodeCall(IERC1271.isValidSignature, (digest, signature));
        bool ok;
        bytes32 answer;
        assembly ("memory-safe") {
            // Only the first word of the answer is copied: a wallet cannot make us pay for a
            // huge return.
            mstore(0, 0)
            ok := staticcall(gas(), signer, add(data, 0x20), mload(data), 0, 0x20)
            ok := and(ok, gt(returndatasize(), 0x1f))
            answer := mload(0)
        }
        // forge-lint: disable-next-line(unsafe-typecast) the answer's first 4 bytes are the magic value
        return ok && bytes4(answer) == IERC1271.isValidSignature.selector;
    }

    /// @notice The ECDSA signer of `digest`, or the zero address for a malformed or malleable
    /// signature.
    function _recover(bytes32 digest, bytes calldata signature) private pure returns (address) {
        bytes32 r;
        bytes32 s;
        uint8 v;
        if (signature.length == 65) {
            r = bytes32(signature[0:32]);
            s = bytes32(signature[32:64]);
            v = uint8(signature[64]);
        } else if (signature.length == 64) {
            r = bytes32(signature[0:32]);
            bytes32 vs = bytes32(signature[32:64]);
            s = vs & bytes32(0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff);
            v = uint8(uint256(vs) >> 255) + 27;
        } else {
            return address(0);
        }
        if (uint256(s) > HALF_N || (v != 27 && v != 28)) return address(0);
        return ecrecover(digest, v, r, s);
    }
}

// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

/// @title IIdentityRegistry
/// @notice ERC-8004's Identity Registry (Trustless Agents, draft): ERC-721 agent ids whose
/// tokenURI (the agentURI) resolves to the agent's registration file, on-chain metadata, and
/// the agent's wallet, set only with the wallet's EIP-712 (EOA) or ERC-1271 (contract)
/// signature. Function and event signatures are the specification's; the errors are ours.
interface IIdentityRegistry {
    /// @notice One on-chain metadata entry given at registration.
    struct MetadataEntry {
        string metadataKey;
        bytes metadataValue;
    }

    /// @notice `caller` is not the agent's owner, one of the owner's operators, nor the
    /// agent's approved address.
    error NotAuthorized(address caller, uint256 agentId);
    /// @notice The key `agentWallet` is set only through setAgentWallet.
    error ReservedMetadataKey(string metadataKey);
    /// @notice The agent wallet cannot be the zero address (unsetAgentWallet clears it).
    error ZeroWallet();
    /// @notice The wallet's signature expired at `deadline`.
    error SignatureExpired(uint256 deadline);
    /// @notice The signature's deadline is more than MAX_DEADLINE_DELAY ahead.
    error DeadlineTooFar(uint256 deadline);
    /// @notice The signature is not `wallet`'s (neither its ECDSA key's nor its ERC-1271 answer).
    error InvalidWalletSignature(address wallet);

    event Registered(uint256 indexed agentId, string agentURI, address indexed owner);
    event MetadataSet(
        uint256 indexed agentId, string indexed indexedMetadataKey, string metadataKey, bytes metadataValue
    );
    event URIUpdated(uint256 indexed agentId, string newURI, address indexed updatedBy);
    /// @notice ERC-4906: the token's metadata (its agentURI) changed.
    event MetadataUpdate(uint256 _tokenId);

    function register() external returns (uint256 agentId);
    function register(string calldata agentURI) external returns (uint256 agentId);
    function register(string calldata agentURI, MetadataEntry[] calldata metadata) external returns (uint256 agentId);
    function setAgentURI(uint256 agentId, string calldata newURI) external;
    function getMetadata(uint256 agentId, string calldata metadataKey) external view returns (bytes memory);
    function setMetadata(uint256 agentId, string calldata metadataKey, bytes calldata metadataValue) external;
    function setAgentWallet(uint256 agentId, address newWallet, uint256 deadline, bytes calldata signature) external;
    function getAgentWallet(uint256 agentId) external view returns (address);
    function unsetAgentWallet(uint256 agentId) external;
    /// @notice Whether `spender` is `agentId`'s owner, an operator of its owner or its approved
    /// address; reverts when the agent does not exist (as the reference's does).
    function isAuthorizedOrOwner(address spender, uint256 agentId) external view returns (bool);
}

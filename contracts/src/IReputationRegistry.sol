// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

/// @title IReputationRegistry
/// @notice ERC-8004's Reputation Registry (Trustless Agents, draft): anyone but an agent's
/// owner and operators gives it feedback (a signed fixed-point value with 0-18 decimals, two
/// tags, an endpoint, a file URI and its hash), revokes its own feedback, and anyone appends
/// responses to a feedback. Function and event signatures are the specification's; the errors
/// are ours.
interface IReputationRegistry {
    /// @notice valueDecimals is above 18.
    error ValueDecimalsTooLarge(uint8 valueDecimals);
    /// @notice |value| is above MAX_ABS_VALUE (1e38).
    error ValueOutOfRange(int128 value);
    /// @notice The agent's owner and operators may not rate it.
    error SelfFeedback(address client, uint256 agentId);
    /// @notice No feedback `feedbackIndex` from the client to the agent (indexes count from 1
    /// to `lastIndex`).
    error FeedbackIndexOutOfRange(uint64 feedbackIndex, uint64 lastIndex);
    /// @notice The feedback is revoked already.
    error AlreadyRevoked(uint256 agentId, address client, uint64 feedbackIndex);
    /// @notice A response needs a URI.
    error EmptyResponseURI();
    /// @notice The average, at the most frequent decimals, does not fit an int128 (values at few
    /// decimals averaged at many): the reference's cast would wrap it.
    error SummaryOutOfRange(int256 average);
    /// @notice getSummary needs the clients to average over (an unfiltered average is a Sybil's).
    error ClientAddressesRequired();

    event NewFeedback(
        uint256 indexed agentId,
        address indexed clientAddress,
        uint64 feedbackIndex,
        int128 value,
        uint8 valueDecimals,
        string indexed indexedTag1,
        string tag1,
        string tag2,
        string endpoint,
        string feedbackURI,
        bytes32 feedbackHash
    );
    event FeedbackRevoked(uint256 indexed agentId, address indexed clientAddress, uint64 indexed feedbackIndex);
    event ResponseAppended(
        uint256 indexed agentId,
        address indexed clientAddress,
        uint64 feedbackIndex,
        address indexed responder,
        string responseURI,
        bytes32 responseHash
    );

    function getIdentityRegistry() external view returns (address identityRegistry);
    function giveFeedback(
        uint256 agentId,
        int128 value,
        uint8 valueDecimals,
        string calldata tag1,
        string calldata tag2,
        string calldata endpoint,
        string calldata feedbackURI,
        bytes32 feedbackHash
    ) external;
    function revokeFeedback(uint256 agentId, uint64 feedbackIndex) external;
    function appendResponse(
        uint256 agentId,
        address clientAddress,
        uint64 feedbackIndex,
        string calldata responseURI,
        bytes32 responseHash
    ) external;
    function getSummary(uint256 agentId, address[] calldata clientAddresses, string calldata tag1, string calldata tag2)
        external
        view
        returns (uint64 count, int128 summaryValue, uint8 summaryValueDecimals);
    function readFeedback(uint256 agentId, address clientAddress, uint64 feedbackIndex)
        external
        view
        returns (int128 value, uint8 valueDecimals, string memory tag1, string memory tag2, bool isRevoked);
    function readAllFeedback(
        uint256 agentId,
        address[] calldata clientAddresses,
        string calldata tag1,
        string calldata tag2,
        bool includeRevoked
    )
        external
        view
        returns (
            address[] memory clients,
            uint64[] memory feedbackIndexes,
            int128[] memory values,
            uint8[] memory valueDecimals,
            string[] memory tag1s,
            string[] memory tag2s,
            bool[] memory revokedStatuses
        );
    function getResponseCount(
        uint256 agentId,
        address clientAddress,
        uint64 feedbackIndex,
        address[] calldata responders
    ) external view returns (uint64 count);
    function getClients(uint256 agentId) external view returns (address[] memory);
    function getLastIndex(uint256 agentId, address clientAddress) external view returns (uint64);
}

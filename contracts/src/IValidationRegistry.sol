// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

/// @title IValidationRegistry
/// @notice ERC-8004's Validation Registry (Trustless Agents, draft): an agent's owner or
/// operator asks a validator to check a piece of work (a request named by its hash); the
/// validator answers 0-100, as often as it likes. Function and event signatures are the
/// specification's; the errors are ours.
interface IValidationRegistry {
    /// @notice The validator cannot be the zero address.
    error ZeroValidator();
    /// @notice A request with this hash exists already.
    error RequestExists(bytes32 requestHash);
    /// @notice No request has this hash.
    error UnknownRequest(bytes32 requestHash);
    /// @notice Only the agent's owner or operators may ask for validation.
    error NotAuthorized(address caller, uint256 agentId);
    /// @notice Only the request's validator may answer it.
    error NotValidator(address caller, address validator);
    /// @notice A response is 0 to 100.
    error ResponseOutOfRange(uint8 response);

    event ValidationRequest(
        address indexed validatorAddress, uint256 indexed agentId, string requestURI, bytes32 indexed requestHash
    );
    event ValidationResponse(
        address indexed validatorAddress,
        uint256 indexed agentId,
        bytes32 indexed requestHash,
        uint8 response,
        string responseURI,
        bytes32 responseHash,
        string tag
    );

    function getIdentityRegistry() external view returns (address identityRegistry);
    function validationRequest(
        address validatorAddress,
        uint256 agentId,
        string calldata requestURI,
        bytes32 requestHash
    ) external;
    function validationResponse(
        bytes32 requestHash,
        uint8 response,
        string calldata responseURI,
        bytes32 responseHash,
        string calldata tag
    ) external;
    function getValidationStatus(bytes32 requestHash)
        external
        view
        returns (
            address validatorAddress,
            uint256 agentId,
            uint8 response,
            bytes32 responseHash,
            string memory tag,
            uint256 lastUpdate
        );
    function getSummary(uint256 agentId, address[] calldata validatorAddresses, string calldata tag)
        external
        view
        returns (uint64 count, uint8 averageResponse);
    function getAgentValidations(uint256 agentId) external view returns (bytes32[] memory requestHashes);
    function getValidatorRequests(address validatorAddress) external view returns (bytes32[] memory requestHashes);
}

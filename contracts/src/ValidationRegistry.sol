// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {IIdentityRegistry} from "./IIdentityRegistry.sol";
import {IValidationRegistry} from "./IValidationRegistry.sol";

/// @title ValidationRegistry
/// @notice ERC-8004's Validation Registry, written for Surety from the specification. The
/// identity registry is fixed at construction; not upgradeable. A request hash names one
/// request forever (the first to use it keeps it). getSummary averages the latest response of
/// every answered request (unanswered ones do not count), rounding down.
contract ValidationRegistry is IValidationRegistry {
    struct Status {
        address validatorAddress;
        uint8 response;
        bool hasResponse;
        uint64 lastUpdate;
        uint256 agentId;
        bytes32 responseHash;
        string tag;
    }

    IIdentityRegistry private immutable _identity;

    mapping(bytes32 requestHash => Status) private _status;
    mapping(uint256 agentId => bytes32[]) private _agentValidations;
    mapping(address validator => bytes32[]) private _validatorRequests;

    constructor(address identityRegistry) {
        _identity = IIdentityRegistry(identityRegistry);
    }

    function getIdentityRegistry() external view returns (address) {
        return address(_identity);
    }

    function validationRequest(
        address validatorAddress,
        uint256 agentId,
        string calldata requestURI,
        bytes32 requestHash
    ) external {
        if (validatorAddress == address(0)) revert ZeroValidator();
        if (_status[requestHash].validatorAddress != address(0)) revert RequestExists(requestHash);
        // Reverts (ERC721NonexistentToken) for an agent that does not exist.
        if (!_identity.isAuthorizedOrOwner(msg.sender, agentId)) revert NotAuthorized(msg.sender, agentId);
        Status storage s = _status[requestHash];
        s.validatorAddress = validatorAddress;
        s.agentId = agentId;
        s.lastUpdate = uint64(block.timestamp);
        _agentValidations[agentId].push(requestHash);
        _validatorRequests[validatorAddress].push(requestHash);
        emit ValidationRequest(validatorAddress, agentId, requestURI, requestHash);
    }

    function validationResponse(
        bytes32 requestHash,
        uint8 response,
        string calldata responseURI,
        bytes32 responseHash,
        string calldata tag
    ) external {
        Status storage s = _status[requestHash];
        address validator = s.validatorAddress;
        if (validator == address(0)) revert UnknownRequest(requestHash);
        if (msg.sender != validator) revert NotValidator(msg.sender, validator);
        if (response > 100) revert ResponseOutOfRange(response);
        s.response = response;
        s.hasResponse = true;
        s.lastUpdate = uint64(block.timestamp);
        s.responseHash = responseHash;
        s.tag = tag;
        emit ValidationResponse(validator, s.agentId, requestHash, response, responseURI, responseHash, tag);
    }

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
        )
    {
        Status storage s = _status[requestHash];
        if (s.validatorAddress == address(0)) revert UnknownRequest(requestHash);
        return (s.validatorAddress, s.agentId, s.response, s.responseHash, s.tag, s.lastUpdate);
    }

    function getSummary(uint256 agentId, address[] calldata validatorAddresses, string calldata tag)
        external
        view
        returns (uint64 count, uint8 averageResponse)
    {
        bytes32[] storage hashes = _agentValidations[agentId];
        bool byTag = bytes(tag).length != 0;
        bytes32 tagHash = keccak256(bytes(tag));
        uint256 total;
        for (uint256 i; i < hashes.length; ++i) {
            Status storage s = _status[hashes[i]];
            if (!s.hasResponse) continue;
            if (byTag && keccak256(bytes(s.tag)) != tagHash) continue;
            if (validatorAddresses.length != 0 && !_contains(validatorAddresses, s.validatorAddress)) continue;
            total += s.response;
            count += 1;
        }
        // forge-lint: disable-next-line(unsafe-typecast) an average of responses <= 100 is <= 100
        if (count != 0) averageResponse = uint8(total / count);
    }

    function getAgentValidations(uint256 agentId) external view returns (bytes32[] memory) {
        return _agentValidations[agentId];
    }

    function getValidatorRequests(address validatorAddress) external view returns (bytes32[] memory) {
        return _validatorRequests[validatorAddress];
    }

    function _contains(address[] calldata list, address a) private pure returns (bool) {
        for (uint256 i; i < list.length; ++i) {
            if (list[i] == a) return true;
        }
        return false;
    }
}

// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {IIdentityRegistry} from "./IIdentityRegistry.sol";
import {IReputationRegistry} from "./IReputationRegistry.sol";

/// @title ReputationRegistry
/// @notice ERC-8004's Reputation Registry, written for Surety from the specification. The
/// identity registry is fixed at construction (the reference sets it in initialize); not
/// upgradeable. Stored per feedback: value, valueDecimals, tag1, tag2 and whether it is
/// revoked; endpoint, feedbackURI and feedbackHash are only emitted. Feedback indexes count
/// from 1 per (agent, client). getSummary averages the matching, unrevoked feedback at 18
/// decimals and reports it at the most frequent valueDecimals among them (the smallest on a
/// tie), truncating toward zero, as the reference does.
contract ReputationRegistry is IReputationRegistry {
    /// @notice The largest |value| a feedback may carry: sums of many stay far inside int256.
    int128 public constant MAX_ABS_VALUE = 1e38;
    /// @notice The most decimals a value may have.
    uint8 public constant MAX_VALUE_DECIMALS = 18;

    struct Feedback {
        int128 value;
        uint8 valueDecimals;
        bool isRevoked;
        string tag1;
        string tag2;
    }

    /// @notice The tags a read filters by; an empty tag filters nothing.
    struct TagFilter {
        bool byTag1;
        bytes32 tag1Hash;
        bool byTag2;
        bytes32 tag2Hash;
    }

    IIdentityRegistry private immutable _identity;

    mapping(uint256 agentId => mapping(address client => mapping(uint64 index => Feedback))) private _feedback;
    mapping(uint256 agentId => mapping(address client => uint64)) private _lastIndex;
    mapping(uint256 agentId => address[]) private _clients;
    mapping(
        uint256 agentId => mapping(address client => mapping(uint64 index => mapping(address responder => uint64)))
    ) private _responseCount;
    mapping(uint256 agentId => mapping(address client => mapping(uint64 index => uint64))) private _responseTotal;

    constructor(address identityRegistry) {
        _identity = IIdentityRegistry(identityRegistry);
    }

    function getIdentityRegistry() external view returns (address) {
        return address(_identity);
    }

    function giveFeedback(
        uint256 agentId,
        int128 value,
        uint8 valueDecimals,
        string memory tag1,
        string memory tag2,
        string memory endpoint,
        string memory feedbackURI,
        bytes32 feedbackHash
    ) external {
        // memory, not calldata: one stack slot per string instead of two keeps this in the stack.
        if (valueDecimals > MAX_VALUE_DECIMALS) revert ValueDecimalsTooLarge(valueDecimals);
        if (value > MAX_ABS_VALUE || value < -MAX_ABS_VALUE) revert ValueOutOfRange(value);
        // Reverts (ERC721NonexistentToken) for an agent that does not exist.
        if (_identity.isAuthorizedOrOwner(msg.sender, agentId)) revert SelfFeedback(msg.sender, agentId);
        uint64 last = _lastIndex[agentId][msg.sender];
        if (last == 0) _clients[agentId].push(msg.sender);
        uint64 index = last + 1;
        _lastIndex[agentId][msg.sender] = index;
        Feedback storage f = _feedback[agentId][msg.sender][index];
        f.value = value;
        f.valueDecimals = valueDecimals;
        if (bytes(tag1).length != 0) f.tag1 = tag1;
        if (bytes(tag2).length != 0) f.tag2 = tag2;
        emit NewFeedback(
            agentId, msg.sender, index, value, valueDecimals, tag1, tag1, tag2, endpoint, feedbackURI, feedbackHash
        );
    }

    function revokeFeedback(uint256 agentId, uint64 feedbackIndex) external {
        _checkIndex(agentId, msg.sender, feedbackIndex);
        Feedback storage f = _feedback[agentId][msg.sender][feedbackIndex];
        if (f.isRevoked) revert AlreadyRevoked(agentId, msg.sender, feedbackIndex);
        f.isRevoked = true;
        emit FeedbackRevoked(agentId, msg.sender, feedbackIndex);
    }

    function appendResponse(
        uint256 agentId,
        address clientAddress,
        uint64 feedbackIndex,
        string calldata responseURI,
        bytes32 responseHash
    ) external {
        _checkIndex(agentId, clientAddress, feedbackIndex);
        if (bytes(responseURI).length == 0) revert EmptyResponseURI();
        _responseCount[agentId][clientAddress][feedbackIndex][msg.sender] += 1;
        _responseTotal[agentId][clientAddress][feedbackIndex] += 1;
        emit ResponseAppended(agentId, clientAddress, feedbackIndex, msg.sender, responseURI, responseHash);
    }

    function getLastIndex(uint256 agentId, address clientAddress) external view returns (uint64) {
        return _lastIndex[agentId][clientAddress];
    }

    function getClients(uint256 agentId) external view returns (address[] memory) {
        return _clients[agentId];
    }

    function readFeedback(uint256 agentId, address clientAddress, uint64 feedbackIndex)
        external
        view
        returns (int128 value, uint8 valueDecimals, string memory tag1, string memory tag2, bool isRevoked)
    {
        _checkIndex(agentId, clientAddress, feedbackIndex);
        Feedback storage f = _feedback[agentId][clientAddress][feedbackIndex];
        return (f.value, f.valueDecimals, f.tag1, f.tag2, f.isRevoked);
    }

    function getSummary(uint256 agentId, address[] calldata clientAddresses, string calldata tag1, string calldata tag2)
        external
        view
        returns (uint64 count, int128 summaryValue, uint8 summaryValueDecimals)
    {
        if (clientAddresses.length == 0) revert ClientAddressesRequired();
        return _summarize(agentId, clientAddresses, _filter(tag1, tag2));
    }

    function _summarize(uint256 agentId, address[] calldata clientAddresses, TagFilter memory filter)
        private
        view
        returns (uint64 count, int128 summaryValue, uint8 summaryValueDecimals)
    {
        int256 sum; // at 18 decimals
        uint64[19] memory perDecimals;
        for (uint256 i; i < clientAddresses.length; ++i) {
            (int256 clientSum, uint64 clientCount) = _sumClient(agentId, clientAddresses[i], filter, perDecimals);
            sum += clientSum;
            count += clientCount;
        }
        if (count == 0) return (0, 0, 0);
        uint64 most;
        for (uint8 d; d <= 18; ++d) {
            if (perDecimals[d] > most) {
                most = perDecimals[d];
                summaryValueDecimals = d;
            }
        }
        int256 average = (sum / int256(uint256(count))) / int256(10 ** (18 - uint256(summaryValueDecimals)));
        // Values at few decimals averaged at many can exceed int128 (1e38 at 0 decimals is 1e56
        // at 18): refused, where a bare cast would wrap it into a wrong number.
        if (average > type(int128).max || average < type(int128).min) revert SummaryOutOfRange(average);
        // forge-lint: disable-next-line(unsafe-typecast) checked against int128's range above
        summaryValue = int128(average);
    }

    /// @notice The sum (at 18 decimals) and count of `client`'s unrevoked feedback to the agent
    /// that passes `filter`, counting each one's decimals into `perDecimals`.
    function _sumClient(uint256 agentId, address client, TagFilter memory filter, uint64[19] memory perDecimals)
        private
        view
        returns (int256 sum, uint64 count)
    {
        uint64 last = _lastIndex[agentId][client];
        for (uint64 j = 1; j <= last; ++j) {
            Feedback storage f = _feedback[agentId][client][j];
            if (f.isRevoked || !_matches(f, filter)) continue;
            sum += int256(f.value) * int256(10 ** (18 - uint256(f.valueDecimals)));
            perDecimals[f.valueDecimals] += 1;
            count += 1;
        }
    }

    function readAllFeedback(
        uint256 agentId,
        address[] memory clientAddresses,
        string memory tag1,
        string memory tag2,
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
        )
    {
        // memory (one stack slot) and a struct of rows: seven arrays do not fit the stack else.
        if (clientAddresses.length == 0) clientAddresses = _clients[agentId];
        Rows memory r = _rows(agentId, clientAddresses, _filter(tag1, tag2), includeRevoked);
        return (r.clients, r.feedbackIndexes, r.values, r.valueDecimals, r.tag1s, r.tag2s, r.revokedStatuses);
    }

    /// @notice readAllFeedback's answer.
    struct Rows {
        address[] clients;
        uint64[] feedbackIndexes;
        int128[] values;
        uint8[] valueDecimals;
        string[] tag1s;
        string[] tag2s;
        bool[] revokedStatuses;
    }

    function _rows(uint256 agentId, address[] memory list, TagFilter memory filter, bool includeRevoked)
        private
        view
        returns (Rows memory r)
    {
        uint256 n;
        for (uint256 pass; pass < 2; ++pass) {
            if (pass == 1) {
                r.clients = new address[](n);
                r.feedbackIndexes = new uint64[](n);
                r.values = new int128[](n);
                r.valueDecimals = new uint8[](n);
                r.tag1s = new string[](n);
                r.tag2s = new string[](n);
                r.revokedStatuses = new bool[](n);
                n = 0;
            }
            for (uint256 i; i < list.length; ++i) {
                uint64 last = _lastIndex[agentId][list[i]];
                for (uint64 j = 1; j <= last; ++j) {
                    Feedback storage f = _feedback[agentId][list[i]][j];
                    if ((f.isRevoked && !includeRevoked) || !_matches(f, filter)) continue;
                    if (pass == 1) {
                        r.clients[n] = list[i];
                        r.feedbackIndexes[n] = j;
                        r.values[n] = f.value;
                        r.valueDecimals[n] = f.valueDecimals;
                        r.tag1s[n] = f.tag1;
                        r.tag2s[n] = f.tag2;
                        r.revokedStatuses[n] = f.isRevoked;
                    }
                    ++n;
                }
            }
        }
    }

    /// @notice Responses to the agent's feedback: from every client when clientAddress is zero,
    /// to every feedback of the client when feedbackIndex is 0, by every responder when
    /// responders is empty.
    function getResponseCount(
        uint256 agentId,
        address clientAddress,
        uint64 feedbackIndex,
        address[] calldata responders
    ) external view returns (uint64 count) {
        if (clientAddress == address(0)) {
            address[] storage all = _clients[agentId];
            for (uint256 i; i < all.length; ++i) {
                count += _countClient(agentId, all[i], responders);
            }
        } else if (feedbackIndex == 0) {
            count = _countClient(agentId, clientAddress, responders);
        } else {
            count = _countOne(agentId, clientAddress, feedbackIndex, responders);
        }
    }

    function _countClient(uint256 agentId, address client, address[] calldata responders)
        private
        view
        returns (uint64 count)
    {
        uint64 last = _lastIndex[agentId][client];
        for (uint64 j = 1; j <= last; ++j) {
            count += _countOne(agentId, client, j, responders);
        }
    }

    function _countOne(uint256 agentId, address client, uint64 index, address[] calldata responders)
        private
        view
        returns (uint64 count)
    {
        if (responders.length == 0) return _responseTotal[agentId][client][index];
        for (uint256 k; k < responders.length; ++k) {
            count += _responseCount[agentId][client][index][responders[k]];
        }
    }

    function _checkIndex(uint256 agentId, address client, uint64 index) private view {
        uint64 last = _lastIndex[agentId][client];
        if (index == 0 || index > last) revert FeedbackIndexOutOfRange(index, last);
    }

    function _filter(string memory tag1, string memory tag2) private pure returns (TagFilter memory) {
        return TagFilter({
            byTag1: bytes(tag1).length != 0,
            tag1Hash: keccak256(bytes(tag1)),
            byTag2: bytes(tag2).length != 0,
            tag2Hash: keccak256(bytes(tag2))
        });
    }

    /// @notice Whether `f` has the filter's tags (an empty tag filters nothing).
    function _matches(Feedback storage f, TagFilter memory filter) private view returns (bool) {
        if (filter.byTag1 && keccak256(bytes(f.tag1)) != filter.tag1Hash) return false;
        if (filter.byTag2 && keccak256(bytes(f.tag2)) != filter.tag2Hash) return false;
        return true;
    }
}

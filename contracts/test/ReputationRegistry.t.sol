// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {Test} from "./lib/Test.sol";
import {ERC721} from "../src/ERC721.sol";
import {IdentityRegistry} from "../src/IdentityRegistry.sol";
import {ReputationRegistry} from "../src/ReputationRegistry.sol";
import {IReputationRegistry} from "../src/IReputationRegistry.sol";

contract ReputationRegistryTest is Test {
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

    IdentityRegistry internal identity;
    ReputationRegistry internal rep;
    address internal owner = makeAddr("owner");
    address internal operator = makeAddr("operator");
    address internal approvedAddr = makeAddr("approved");
    address internal alice = makeAddr("alice");
    address internal bob = makeAddr("bob");
    address internal carol = makeAddr("carol");
    uint256 internal agent;

    function setUp() public {
        identity = new IdentityRegistry();
        rep = new ReputationRegistry(address(identity));
        vm.startPrank(owner);
        agent = identity.register("ipfs://agent");
        identity.setApprovalForAll(operator, true);
        identity.approve(approvedAddr, agent);
        vm.stopPrank();
    }

    function _give(address client, int128 value, uint8 decimals, string memory tag1, string memory tag2) internal {
        vm.prank(client);
        rep.giveFeedback(agent, value, decimals, tag1, tag2, "", "", bytes32(0));
    }

    function _one(address a) internal pure returns (address[] memory list) {
        list = new address[](1);
        list[0] = a;
    }

    function _two(address a, address b) internal pure returns (address[] memory list) {
        list = new address[](2);
        list[0] = a;
        list[1] = b;
    }

    function _outOfRange(uint64 index, uint64 last) internal pure returns (bytes memory) {
        return abi.encodeWithSelector(IReputationRegistry.FeedbackIndexOutOfRange.selector, index, last);
    }

    function test_getIdentityRegistry() public view {
        vm.assertEq(rep.getIdentityRegistry(), address(identity), "identity");
    }

    // --- giveFeedback ---

    function test_giveFeedback_storesAndEmits() public {
        bytes32 h = keccak256("audit");
        vm.expectEmit(true, true, true, true, address(rep));
        emit NewFeedback(agent, alice, 1, 87, 0, "surety/audit", "surety/audit", "bounty", "https://e", "https://a", h);
        vm.prank(alice);
        rep.giveFeedback(agent, 87, 0, "surety/audit", "bounty", "https://e", "https://a", h);
        (int128 v, uint8 d, string memory t1, string memory t2, bool revoked) = rep.readFeedback(agent, alice, 1);
        vm.assertEq(int256(v), 87, "value");
        vm.assertEq(uint256(d), 0, "decimals");
        vm.assertEq(keccak256(bytes(t1)), keccak256("surety/audit"), "tag1");
        vm.assertEq(keccak256(bytes(t2)), keccak256("bounty"), "tag2");
        vm.assertFalse(revoked, "revoked");
        vm.assertEq(uint256(rep.getLastIndex(agent, alice)), 1, "last index");
        _give(alice, 5, 1, "", "");
        vm.assertEq(uint256(rep.getLastIndex(agent, alice)), 2, "second index");
        _give(bob, 5, 1, "", "");
        address[] memory clients = rep.getClients(agent);
        vm.assertEq(clients.length, 2, "clients once each");
        vm.assertEq(clients[0], alice, "first client");
        vm.assertEq(clients[1], bob, "second client");
    }

    /// One audit published as feedback, a client's first to the agent: the gas snapshot's
    /// figure beside ERC-8004's published one in bench/RESULTS.md.
    function test_giveFeedback_gasOfAnAudit() public {
        vm.prank(alice);
        rep.giveFeedback(
            agent,
            8000,
            2,
            "surety/audit",
            "bounty:1",
            "",
            "https://node.example/v1/log/proof/inclusion?leaf=5eed000000000000000000000000000000000000000000000000000000000001&size=40",
            keccak256("leaf")
        );
        vm.assertEq(uint256(rep.getLastIndex(agent, alice)), 1, "stored");
    }

    function testFuzz_giveFeedback_decimalsAbove18(uint8 decimals) public {
        decimals = uint8(bound(decimals, 19, 255));
        vm.prank(alice);
        vm.expectRevert(abi.encodeWithSelector(IReputationRegistry.ValueDecimalsTooLarge.selector, decimals));
        rep.giveFeedback(agent, 1, decimals, "", "", "", "", bytes32(0));
    }

    function testFuzz_giveFeedback_valueBounds(int128 value, uint8 decimals) public {
        decimals = uint8(bound(decimals, 0, 18));
        bool inRange = value <= 1e38 && value >= -1e38;
        if (!inRange) vm.expectRevert(abi.encodeWithSelector(IReputationRegistry.ValueOutOfRange.selector, value));
        vm.prank(alice);
        rep.giveFeedback(agent, value, decimals, "", "", "", "", bytes32(0));
        if (inRange) {
            (int128 v, uint8 d,,,) = rep.readFeedback(agent, alice, 1);
            vm.assertEq(int256(v), int256(value), "value");
            vm.assertEq(uint256(d), decimals, "decimals");
        }
    }

    function test_giveFeedback_edgeValues() public {
        _give(alice, 1e38, 18, "", "");
        _give(alice, -1e38, 0, "", "");
        vm.prank(alice);
        vm.expectRevert(abi.encodeWithSelector(IReputationRegistry.ValueOutOfRange.selector, int128(1e38 + 1)));
        rep.giveFeedback(agent, 1e38 + 1, 0, "", "", "", "", bytes32(0));
        vm.prank(alice);
        vm.expectRevert(abi.encodeWithSelector(IReputationRegistry.ValueOutOfRange.selector, type(int128).min));
        rep.giveFeedback(agent, type(int128).min, 0, "", "", "", "", bytes32(0));
    }

    function test_giveFeedback_ownerOperatorAndApprovedCannotRate() public {
        address[3] memory selves = [owner, operator, approvedAddr];
        for (uint256 i; i < selves.length; ++i) {
            vm.prank(selves[i]);
            vm.expectRevert(abi.encodeWithSelector(IReputationRegistry.SelfFeedback.selector, selves[i], agent));
            rep.giveFeedback(agent, 100, 0, "", "", "", "", bytes32(0));
        }
    }

    function test_giveFeedback_unknownAgent() public {
        vm.prank(alice);
        vm.expectRevert(abi.encodeWithSelector(ERC721.ERC721NonexistentToken.selector, 42));
        rep.giveFeedback(42, 1, 0, "", "", "", "", bytes32(0));
    }

    /// After a transfer, the old owner is a stranger and may rate; the new one may not.
    function test_giveFeedback_followsOwnership() public {
        vm.prank(owner);
        identity.transferFrom(owner, carol, agent);
        _give(owner, 1, 0, "", "");
        vm.prank(carol);
        vm.expectRevert(abi.encodeWithSelector(IReputationRegistry.SelfFeedback.selector, carol, agent));
        rep.giveFeedback(agent, 1, 0, "", "", "", "", bytes32(0));
    }

    // --- revokeFeedback ---

    function test_revokeFeedback() public {
        _give(alice, 10, 0, "", "");
        vm.expectEmit(true, true, true, true, address(rep));
        emit FeedbackRevoked(agent, alice, 1);
        vm.prank(alice);
        rep.revokeFeedback(agent, 1);
        (,,,, bool revoked) = rep.readFeedback(agent, alice, 1);
        vm.assertTrue(revoked, "revoked");
    }

    function test_revokeFeedback_twice() public {
        _give(alice, 10, 0, "", "");
        vm.startPrank(alice);
        rep.revokeFeedback(agent, 1);
        vm.expectRevert(abi.encodeWithSelector(IReputationRegistry.AlreadyRevoked.selector, agent, alice, 1));
        rep.revokeFeedback(agent, 1);
        vm.stopPrank();
    }

    function test_revokeFeedback_indexZeroAndPastLast() public {
        _give(alice, 10, 0, "", "");
        vm.startPrank(alice);
        vm.expectRevert(_outOfRange(0, 1));
        rep.revokeFeedback(agent, 0);
        vm.expectRevert(_outOfRange(2, 1));
        rep.revokeFeedback(agent, 2);
        vm.stopPrank();
    }

    /// Only the client who gave a feedback can revoke it: another's index is not theirs.
    function test_revokeFeedback_othersFeedback() public {
        _give(alice, 10, 0, "", "");
        vm.prank(bob);
        vm.expectRevert(_outOfRange(1, 0));
        rep.revokeFeedback(agent, 1);
    }

    // --- appendResponse / getResponseCount ---

    function test_appendResponse_countsPerResponder() public {
        _give(alice, 10, 0, "", "");
        _give(alice, 20, 0, "", "");
        _give(bob, 30, 0, "", "");
        vm.expectEmit(true, true, true, true, address(rep));
        emit ResponseAppended(agent, alice, 1, owner, "ipfs://refund", keccak256("r"));
        vm.prank(owner);
        rep.appendResponse(agent, alice, 1, "ipfs://refund", keccak256("r"));
        vm.prank(carol);
        rep.appendResponse(agent, alice, 1, "ipfs://spam", bytes32(0));
        vm.prank(carol);
        rep.appendResponse(agent, alice, 2, "ipfs://spam", bytes32(0));
        vm.prank(carol);
        rep.appendResponse(agent, bob, 1, "ipfs://spam", bytes32(0));
        address[] memory none = new address[](0);
        vm.assertEq(uint256(rep.getResponseCount(agent, alice, 1, none)), 2, "one feedback, all responders");
        vm.assertEq(uint256(rep.getResponseCount(agent, alice, 1, _one(owner))), 1, "one feedback, owner");
        vm.assertEq(uint256(rep.getResponseCount(agent, alice, 0, none)), 3, "all of alice's");
        vm.assertEq(uint256(rep.getResponseCount(agent, alice, 0, _one(carol))), 2, "alice's, by carol");
        vm.assertEq(uint256(rep.getResponseCount(agent, address(0), 0, none)), 4, "all");
        vm.assertEq(uint256(rep.getResponseCount(agent, address(0), 0, _two(owner, carol))), 4, "all, both");
        vm.assertEq(uint256(rep.getResponseCount(agent, bob, 1, _one(owner))), 0, "bob's, by owner");
    }

    function test_appendResponse_emptyURI() public {
        _give(alice, 10, 0, "", "");
        vm.expectRevert(IReputationRegistry.EmptyResponseURI.selector);
        rep.appendResponse(agent, alice, 1, "", bytes32(0));
    }

    function test_appendResponse_noSuchFeedback() public {
        _give(alice, 10, 0, "", "");
        vm.expectRevert(_outOfRange(2, 1));
        rep.appendResponse(agent, alice, 2, "ipfs://x", bytes32(0));
        vm.expectRevert(_outOfRange(0, 1));
        rep.appendResponse(agent, alice, 0, "ipfs://x", bytes32(0));
    }

    function test_readFeedback_noSuchFeedback() public {
        vm.expectRevert(_outOfRange(1, 0));
        rep.readFeedback(agent, alice, 1);
    }

    // --- getSummary ---

    function test_getSummary_needsClients() public {
        vm.expectRevert(IReputationRegistry.ClientAddressesRequired.selector);
        rep.getSummary(agent, new address[](0), "", "");
    }

    function test_getSummary_modeDecimalsTagsAndRevoked() public {
        _give(alice, 9977, 2, "uptime", ""); // 99.77
        _give(alice, 9900, 2, "uptime", ""); // 99.00
        _give(bob, 98, 0, "uptime", ""); // 98
        _give(bob, 1, 0, "reachable", "");
        _give(carol, 50, 0, "uptime", ""); // not in the filter
        (uint64 count, int128 value, uint8 decimals) = rep.getSummary(agent, _two(alice, bob), "uptime", "");
        vm.assertEq(uint256(count), 3, "count");
        vm.assertEq(uint256(decimals), 2, "mode decimals");
        vm.assertEq(int256(value), 9892, "average 98.92"); // (99.77 + 99 + 98) / 3 = 98.923...
        vm.prank(alice);
        rep.revokeFeedback(agent, 1);
        (count, value, decimals) = rep.getSummary(agent, _two(alice, bob), "uptime", "");
        vm.assertEq(uint256(count), 2, "revoked left out");
        vm.assertEq(uint256(decimals), 0, "a tie of decimals goes to the fewest");
        vm.assertEq(int256(value), 98, "average 98.5 at 0 decimals, truncated");
        (count,,) = rep.getSummary(agent, _two(alice, bob), "", "");
        vm.assertEq(uint256(count), 3, "no tag filter");
        (count, value, decimals) = rep.getSummary(agent, _one(carol), "nothing", "");
        vm.assertEq(uint256(count), 0, "none");
        vm.assertEq(int256(value), 0, "zero");
    }

    /// 1e38 at 0 decimals, averaged at 18 decimals (two of the three feedbacks have 18), is
    /// about 3.3e55: past int128. A bare cast wraps it into a wrong number; refused instead.
    function test_getSummary_outOfInt128() public {
        _give(alice, 1e38, 0, "", "");
        _give(bob, 1, 18, "", "");
        _give(bob, 1, 18, "", "");
        int256 average = (int256(1e38) * 1e18 + 2) / 3;
        vm.expectRevert(abi.encodeWithSelector(IReputationRegistry.SummaryOutOfRange.selector, average));
        rep.getSummary(agent, _two(alice, bob), "", "");
    }

    function test_getSummary_tag2AndNegative() public {
        _give(alice, -32, 1, "tradingYield", "day");
        _give(alice, -10, 1, "tradingYield", "week");
        (uint64 count, int128 value, uint8 decimals) = rep.getSummary(agent, _one(alice), "tradingYield", "day");
        vm.assertEq(uint256(count), 1, "count");
        vm.assertEq(int256(value), -32, "value");
        vm.assertEq(uint256(decimals), 1, "decimals");
    }

    /// The summary is the average of the normalised values, at the most frequent decimals.
    function testFuzz_getSummary_matchesAModel(int64[6] memory values, uint8[6] memory decimals, uint8 revokeMask)
        public
    {
        int256 sum;
        uint64 count;
        uint64[19] memory per;
        for (uint256 i; i < 6; ++i) {
            uint8 d = uint8(bound(decimals[i], 0, 18));
            address client = i % 2 == 0 ? alice : bob;
            _give(client, values[i], d, "t", "");
            if (revokeMask & (1 << i) != 0) {
                uint64 last = rep.getLastIndex(agent, client);
                vm.prank(client);
                rep.revokeFeedback(agent, last);
                continue;
            }
            sum += int256(values[i]) * int256(10 ** (18 - uint256(d)));
            per[d]++;
            count++;
        }
        (uint64 gotCount, int128 gotValue, uint8 gotDecimals) = rep.getSummary(agent, _two(alice, bob), "t", "");
        vm.assertEq(uint256(gotCount), count, "count");
        if (count == 0) {
            vm.assertEq(int256(gotValue), 0, "empty value");
            return;
        }
        uint8 mode;
        for (uint8 d; d <= 18; ++d) {
            if (per[d] > per[mode]) mode = d;
        }
        vm.assertEq(uint256(gotDecimals), mode, "mode");
        vm.assertEq(int256(gotValue), sum / int256(uint256(count)) / int256(10 ** (18 - uint256(mode))), "value");
    }

    // --- readAllFeedback ---

    function test_readAllFeedback_filters() public {
        _give(alice, 1, 0, "a", "x");
        _give(bob, 2, 0, "b", "x");
        _give(alice, 3, 0, "a", "y");
        vm.prank(alice);
        rep.revokeFeedback(agent, 1);
        (address[] memory clients, uint64[] memory idx, int128[] memory vals,,,, bool[] memory revoked) =
            rep.readAllFeedback(agent, new address[](0), "", "", false);
        vm.assertEq(clients.length, 2, "unrevoked");
        vm.assertEq(clients[0], alice, "client order: first client first");
        vm.assertEq(uint256(idx[0]), 2, "alice's second");
        vm.assertEq(int256(vals[1]), 2, "bob's");
        (clients,,,,,, revoked) = rep.readAllFeedback(agent, new address[](0), "", "", true);
        vm.assertEq(clients.length, 3, "with revoked");
        vm.assertTrue(revoked[0], "first revoked");
        (clients,,,,,,) = rep.readAllFeedback(agent, _one(alice), "a", "", true);
        vm.assertEq(clients.length, 2, "alice, tag a");
        (clients,,,,,,) = rep.readAllFeedback(agent, new address[](0), "", "x", true);
        vm.assertEq(clients.length, 2, "tag2 x");
        (clients,,,,,,) = rep.readAllFeedback(agent, _one(carol), "", "", true);
        vm.assertEq(clients.length, 0, "carol none");
    }
}

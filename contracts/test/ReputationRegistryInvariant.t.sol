// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {Test, Common} from "./lib/Test.sol";
import {IdentityRegistry} from "../src/IdentityRegistry.sol";
import {ReputationRegistry} from "../src/ReputationRegistry.sol";

/// @notice Random feedback, revocations, responses and agent transfers by a few clients on two
/// agents, with a model of what the registry must hold. Refused calls revert the handler call
/// (forge counts them).
contract ReputationHandler is Common {
    IdentityRegistry public immutable identity;
    ReputationRegistry public immutable rep;
    address[3] public clients = [address(0xA1), address(0xA2), address(0xA3)];
    address[2] public owners = [address(0x0A), address(0x0B)];
    uint256[2] public agents;

    // The model: per agent and client, what was given and revoked.
    mapping(uint256 agent => mapping(address client => uint64)) public given;
    mapping(uint256 agent => mapping(address client => uint64)) public revoked;
    mapping(uint256 agent => mapping(address client => mapping(uint64 index => bool))) public isRevoked;
    mapping(uint256 agent => uint256) public responses;
    bool public selfRated; // an owner's feedback got through: must never happen

    constructor() {
        identity = new IdentityRegistry();
        rep = new ReputationRegistry(address(identity));
        for (uint256 i; i < 2; ++i) {
            vm.prank(owners[i]);
            agents[i] = identity.register("ipfs://agent");
        }
    }

    function give(uint256 a, uint256 c, int64 value, uint8 decimals) external {
        uint256 agent = agents[a % 2];
        address client = clients[c % 3];
        vm.prank(client);
        rep.giveFeedback(agent, value, uint8(bound(decimals, 0, 18)), "t", "", "", "", bytes32(0));
        if (client == identity.ownerOf(agent)) selfRated = true;
        given[agent][client] += 1;
    }

    function revoke(uint256 a, uint256 c, uint64 index) external {
        uint256 agent = agents[a % 2];
        address client = clients[c % 3];
        uint64 n = given[agent][client];
        if (n == 0) return;
        index = uint64(bound(index, 1, n));
        vm.prank(client);
        rep.revokeFeedback(agent, index);
        revoked[agent][client] += 1;
        isRevoked[agent][client][index] = true;
    }

    function respond(uint256 a, uint256 c, uint64 index, uint256 who) external {
        uint256 agent = agents[a % 2];
        address client = clients[c % 3];
        uint64 n = given[agent][client];
        if (n == 0) return;
        vm.prank(address(uint160(0xF000 + who % 4)));
        rep.appendResponse(agent, client, uint64(bound(index, 1, n)), "ipfs://r", bytes32(0));
        responses[agent] += 1;
    }

    /// An agent moves to a client: from then on that client may not rate it.
    function transfer(uint256 a, uint256 c) external {
        uint256 agent = agents[a % 2];
        address from = identity.ownerOf(agent);
        vm.prank(from);
        identity.transferFrom(from, clients[c % 3], agent);
    }

    function clientList() external view returns (address[] memory list) {
        list = new address[](3);
        for (uint256 i; i < 3; ++i) {
            list[i] = clients[i];
        }
    }
}

contract ReputationRegistryInvariantTest is Test {
    ReputationHandler internal h;

    function setUp() public {
        h = new ReputationHandler();
        targetContract(address(h));
    }

    /// Each client's last index is the feedback it gave; readAllFeedback with revoked ones holds
    /// them all, without them the unrevoked, and getSummary counts the unrevoked.
    function invariant_indexesAndCountsFollowTheModel() public view {
        ReputationRegistry rep = h.rep();
        address[] memory clients = h.clientList();
        for (uint256 a; a < 2; ++a) {
            uint256 agent = h.agents(a);
            uint256 all;
            uint256 live;
            for (uint256 c; c < 3; ++c) {
                uint64 n = h.given(agent, clients[c]);
                vm.assertEq(uint256(rep.getLastIndex(agent, clients[c])), n, "last index");
                uint256 gone;
                for (uint64 i = 1; i <= n; ++i) {
                    (,,,, bool r) = rep.readFeedback(agent, clients[c], i);
                    vm.assertEq(r, h.isRevoked(agent, clients[c], i), "revoked flag");
                    if (r) ++gone;
                }
                all += n;
                live += n - gone;
            }
            (address[] memory withRevoked,,,,,,) = rep.readAllFeedback(agent, new address[](0), "", "", true);
            (address[] memory unrevoked,,,,,,) = rep.readAllFeedback(agent, new address[](0), "", "", false);
            vm.assertEq(withRevoked.length, all, "readAllFeedback with revoked");
            vm.assertEq(unrevoked.length, live, "readAllFeedback without revoked");
            (uint64 count,,) = rep.getSummary(agent, clients, "", "");
            vm.assertEq(uint256(count), live, "summary count");
            vm.assertEq(
                uint256(rep.getResponseCount(agent, address(0), 0, new address[](0))), h.responses(agent), "responses"
            );
        }
    }

    /// No owner ever rated its own agent.
    function invariant_noSelfFeedback() public view {
        vm.assertFalse(h.selfRated(), "self feedback");
    }
}

// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {Test, Common} from "./lib/Test.sol";
import {StakeRegistry} from "../src/StakeRegistry.sol";
import {IStakeRegistry} from "../src/IStakeRegistry.sol";

/// @notice Random staking, unbonding, withdrawing, slashing, rotating and revoking by a few
/// controllers over a few agent ids.
contract StakeHandler is Common {
    StakeRegistry public immutable registry;
    address public immutable slasher;
    address[2] public controllers = [address(0xC1), address(0xC2)];
    bytes32[2] public ids = [keccak256("a"), keccak256("b")];
    uint256 public slashedOut; // sent to beneficiaries
    uint256 public withdrawnOut; // sent to controllers
    uint256 public stakedIn;

    constructor(StakeRegistry registry_, address slasher_) {
        registry = registry_;
        slasher = slasher_;
        for (uint256 i = 0; i < 2; i++) {
            vm.deal(controllers[i], 1e9 ether);
        }
    }

    function bind(uint256 c, uint256 i) external {
        vm.prank(controllers[c % 2]);
        try registry.bind(ids[i % 2], "") {} catch {}
    }

    function stake(uint256 c, uint256 i, uint256 amount) external {
        amount = bound(amount, 1, 1_000 ether);
        vm.prank(controllers[c % 2]);
        try registry.stake{value: amount}(ids[i % 2], amount) {
            stakedIn += amount;
        } catch {}
    }

    function requestUnbond(uint256 c, uint256 i, uint256 amount) external {
        address who = controllers[c % 2];
        IStakeRegistry.Record memory r = registry.recordOf(ids[i % 2], who);
        // Mostly amounts the record can cover, sometimes more (which must fail).
        uint256 cap = amount % 8 == 0 ? 1_000 ether : r.staked;
        if (cap == 0) cap = 1;
        vm.prank(who);
        try registry.requestUnbond(ids[i % 2], bound(amount, 1, cap)) {} catch {}
    }

    function withdraw(uint256 c, uint256 i) external {
        address who = controllers[c % 2];
        uint256 before = who.balance;
        vm.prank(who);
        try registry.withdraw(ids[i % 2]) {
            withdrawnOut += who.balance - before;
        } catch {}
    }

    function slash(uint256 c, uint256 i, uint256 amount) external {
        IStakeRegistry.Record memory r = registry.recordOf(ids[i % 2], controllers[c % 2]);
        uint256 cap = amount % 8 == 0 ? 1_000 ether : uint256(r.staked) + r.unbonding;
        if (cap == 0) cap = 1;
        vm.prank(slasher);
        try registry.slash(ids[i % 2], controllers[c % 2], bound(amount, 1, cap), address(0xBEEF), "") {
            slashedOut = address(0xBEEF).balance;
        } catch {}
    }

    function rotate(uint256 c, uint256 i, uint256 j) external {
        vm.prank(controllers[c % 2]);
        try registry.rotate(ids[i % 2], ids[j % 2], "") {} catch {}
    }

    function revoke(uint256 c, uint256 i) external {
        vm.prank(controllers[c % 2]);
        try registry.revoke(ids[i % 2]) {} catch {}
    }

    function warp(uint256 dt) external {
        vm.warp(block.timestamp + bound(dt, 0, 10 days));
    }
}

contract StakeRegistryInvariantTest is Test {
    StakeRegistry internal registry;
    StakeHandler internal handler;

    function setUp() public {
        vm.warp(1_700_000_000);
        address owner = makeAddr("owner");
        registry = new StakeRegistry(address(0), 7 days, owner);
        handler = new StakeHandler(registry, makeAddr("slasher"));
        address slasher = handler.slasher(); // read first: a prank applies to the next call
        vm.prank(owner);
        registry.setSlasher(slasher, true);
        targetContract(address(handler));
    }

    /// Every wei the registry holds is recorded in some record, and every wei that came in
    /// either is still there or went out through a withdrawal or a slash.
    function invariant_balanceEqualsRecordedStake() public view {
        uint256 recorded;
        for (uint256 c = 0; c < 2; c++) {
            for (uint256 i = 0; i < 2; i++) {
                IStakeRegistry.Record memory r = registry.recordOf(handler.ids(i), handler.controllers(c));
                recorded += uint256(r.staked) + r.unbonding;
                if (r.status != IStakeRegistry.Status.Bound) {
                    vm.assertEq(registry.stakeOf(handler.ids(i), handler.controllers(c)), 0, "only bound stake counts");
                }
            }
        }
        vm.assertEq(address(registry).balance, recorded, "held == recorded");
        vm.assertEq(handler.stakedIn(), recorded + handler.withdrawnOut() + handler.slashedOut(), "in == held + out");
    }
}

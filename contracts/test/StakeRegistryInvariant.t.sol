// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {Test, Common} from "./lib/Test.sol";
import {StakeRegistry} from "../src/StakeRegistry.sol";
import {IStakeRegistry} from "../src/IStakeRegistry.sol";

/// @notice Random staking, unbonding, withdrawing, locking, unlocking with slashes, rotating
/// and revoking by a few controllers over a few agent ids. The handler is the registry's
/// locker. Calls are not wrapped in try/catch: a call the registry refuses reverts the handler
/// call, its bookkeeping included, and forge counts it in the run's "reverts".
contract StakeHandler is Common {
    struct Lock {
        uint256 id;
        bytes32 agent;
        address controller;
        uint256 amount;
    }

    StakeRegistry public immutable registry;
    address[2] public controllers = [address(0xC1), address(0xC2)];
    bytes32[2] public ids = [keccak256("a"), keccak256("b")];
    uint256 public slashedOut; // sent to beneficiaries
    uint256 public withdrawnOut; // sent to controllers
    uint256 public stakedIn;
    bool public slashAboveLock; // a slash took more than its lock: must never happen
    Lock[] internal _open; // locks not yet ended
    uint256 private _lockIds;

    /// @dev Creates the registry, so the handler is its locker.
    constructor() {
        registry = new StakeRegistry(address(0), 7 days, 0.1 ether, address(0));
        for (uint256 i = 0; i < 2; i++) {
            vm.deal(controllers[i], 1e9 ether);
        }
    }

    function bind(uint256 c, uint256 i) external {
        vm.prank(controllers[c % 2]);
        registry.bind(ids[i % 2], "");
    }

    function stake(uint256 c, uint256 i, uint256 amount) external {
        amount = bound(amount, 1, 1_000 ether);
        vm.prank(controllers[c % 2]);
        registry.stake{value: amount}(ids[i % 2], amount);
        stakedIn += amount;
    }

    function requestUnbond(uint256 c, uint256 i, uint256 amount) external {
        address who = controllers[c % 2];
        IStakeRegistry.Record memory r = registry.recordOf(ids[i % 2], who);
        // Mostly amounts the free stake can cover, sometimes more (which must fail).
        uint256 cap = amount % 8 == 0 ? 1_000 ether : r.staked - r.locked;
        if (cap == 0) cap = 1;
        vm.prank(who);
        registry.requestUnbond(ids[i % 2], bound(amount, 1, cap));
    }

    function withdraw(uint256 c, uint256 i) external {
        address who = controllers[c % 2];
        uint256 before = who.balance;
        vm.prank(who);
        registry.withdraw(ids[i % 2]);
        withdrawnOut += who.balance - before;
    }

    function lock(uint256 c, uint256 i, uint256 amount) external {
        address who = controllers[c % 2];
        bytes32 agent = ids[i % 2];
        IStakeRegistry.Record memory r = registry.recordOf(agent, who);
        uint256 cap = amount % 8 == 0 ? 1_000 ether : r.staked - r.locked;
        if (cap == 0) cap = 1;
        amount = bound(amount, 1, cap);
        registry.lock(++_lockIds, agent, who, amount);
        _open.push(Lock(_lockIds, agent, who, amount));
    }

    function unlock(uint256 seed, uint256 slash) external {
        if (_open.length == 0) return;
        uint256 k = seed % _open.length;
        Lock memory l = _open[k];
        // Mostly slashes within the lock, sometimes above it (which must fail).
        slash = bound(slash, 0, slash % 8 == 0 ? l.amount + 1 : l.amount);
        uint256 stakedBefore = registry.recordOf(l.agent, l.controller).staked;
        uint256 paidBefore = address(0xBEEF).balance + registry.credit(address(0xBEEF));
        registry.unlock(l.id, l.controller, l.amount, slash, address(0xBEEF));
        uint256 taken = stakedBefore - registry.recordOf(l.agent, l.controller).staked;
        if (taken > l.amount || taken != slash) slashAboveLock = true;
        slashedOut += address(0xBEEF).balance + registry.credit(address(0xBEEF)) - paidBefore;
        _open[k] = _open[_open.length - 1];
        _open.pop();
    }

    /// @notice The sum of the open locks' amounts on one record.
    function lockedOn(bytes32 agent, address controller) external view returns (uint256 sum) {
        for (uint256 k = 0; k < _open.length; k++) {
            if (_open[k].agent == agent && _open[k].controller == controller) sum += _open[k].amount;
        }
    }

    function rotate(uint256 c, uint256 i, uint256 j) external {
        vm.prank(controllers[c % 2]);
        registry.rotate(ids[i % 2], ids[j % 2], "");
    }

    function revoke(uint256 c, uint256 i) external {
        vm.prank(controllers[c % 2]);
        registry.revoke(ids[i % 2]);
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
        handler = new StakeHandler();
        registry = handler.registry();
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
        recorded += registry.credit(address(0xBEEF)); // slashes a beneficiary refused wait here
        vm.assertEq(address(registry).balance, recorded, "held == recorded");
        vm.assertEq(handler.stakedIn(), recorded + handler.withdrawnOut() + handler.slashedOut(), "in == held + out");
    }

    /// Every record's locked stake is the sum of its open locks and never exceeds its stake; a
    /// slash never took more than its lock.
    function invariant_lockedIsCoveredAndSlashesStayWithinLocks() public view {
        vm.assertFalse(handler.slashAboveLock(), "a slash exceeded its lock");
        for (uint256 c = 0; c < 2; c++) {
            for (uint256 i = 0; i < 2; i++) {
                IStakeRegistry.Record memory r = registry.recordOf(handler.ids(i), handler.controllers(c));
                vm.assertLe(r.locked, r.staked, "locked <= staked");
                vm.assertEq(r.locked, handler.lockedOn(handler.ids(i), handler.controllers(c)), "locked == open locks");
            }
        }
    }
}

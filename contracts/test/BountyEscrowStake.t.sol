// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {EscrowFixture} from "./lib/Fixtures.sol";
import {IBountyEscrow} from "../src/IBountyEscrow.sol";
import {IStakeRegistry} from "../src/IStakeRegistry.sol";

/// @notice Stake at risk per claim, bounded slashing and arbiter sanity: the attacks of issue 14
/// written as tests first.
contract BountyEscrowStakeTest is EscrowFixture {
    function _stake(uint256 amount) internal {
        vm.startPrank(worker);
        registry.bind(AGENT, "proof");
        registry.stake{value: amount}(AGENT, amount);
        vm.stopPrank();
    }

    function _claim(uint256 id, IBountyEscrow.Terms memory t) internal {
        vm.prank(worker);
        escrow.claim(id, t, AGENT);
    }

    function _locked() internal view returns (uint256) {
        return registry.recordOf(AGENT, worker).locked;
    }

    // --- one stake backs only as much as it holds ---

    function test_claim_locksTheMinimumStake() public {
        _stake(5 ether);
        (uint256 id, IBountyEscrow.Terms memory t) = postETHWithStake(1 ether, 2 ether);
        _claim(id, t);
        vm.assertEq(_locked(), 2 ether, "locked");
        vm.assertEq(registry.lockedAgent(id), AGENT, "under the bounty id");
        vm.assertEq(registry.freeStakeOf(AGENT, worker), 3 ether, "free");
    }

    /// The attack measured at 66f817e: one 5 ETH stake claimed 300 ETH of bounties and was
    /// withdrawn while they were disputed. Now each claim locks its minimum stake.
    function test_claim_oneStakeCannotBackMoreThanItHolds() public {
        _stake(5 ether);
        for (uint256 i = 0; i < 5; i++) {
            (uint256 id, IBountyEscrow.Terms memory t) = postETHWithStake(60 ether, 1 ether);
            _claim(id, t);
        }
        (uint256 id6, IBountyEscrow.Terms memory t6) = postETHWithStake(60 ether, 1 ether);
        vm.expectRevert(
            abi.encodeWithSelector(IBountyEscrow.InsufficientStake.selector, AGENT, uint256(0), uint256(1 ether))
        );
        _claim(id6, t6);
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.InsufficientStake.selector, uint256(0), uint256(1)));
        vm.prank(worker);
        registry.requestUnbond(AGENT, 1);
    }

    function test_rotate_cannotFrontRunARuling() public {
        _stake(2 ether);
        (uint256 id, IBountyEscrow.Terms memory t) = postETHWithStake(1 ether, 2 ether);
        _claim(id, t);
        vm.prank(worker);
        escrow.submit(id, t, worker, RESULT);
        vm.prank(poster);
        escrow.reject(id, t, worker, keccak256("harm"));
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.StakeLocked.selector, AGENT, worker, uint256(2 ether)));
        vm.prank(worker);
        registry.rotate(AGENT, keccak256("did:key:escape"), "");
        uint256 before = poster.balance;
        vm.prank(arbiter);
        escrow.resolve(id, t, worker, 0, 2 ether);
        vm.assertEq(poster.balance - before, 1 ether + 2 ether, "refund plus the slashed lock");
        vm.assertEq(registry.stakeOf(AGENT, worker), 0, "stake slashed");
    }

    // --- every end releases the lock ---

    function test_terminalStatuses_releaseTheLock() public {
        _stake(10 ether);
        // accept
        (uint256 id, IBountyEscrow.Terms memory t) = postETHWithStake(1 ether, 1 ether);
        _claim(id, t);
        vm.prank(worker);
        escrow.submit(id, t, worker, RESULT);
        vm.prank(poster);
        escrow.accept(id, t, worker);
        vm.assertEq(_locked(), 0, "accept releases");
        // release after a silent review
        (id, t) = postETHWithStake(1 ether, 1 ether);
        _claim(id, t);
        vm.prank(worker);
        escrow.submit(id, t, worker, RESULT);
        vm.warp(block.timestamp + REVIEW + 1);
        vm.prank(worker);
        escrow.release(id, t, worker);
        vm.assertEq(_locked(), 0, "release releases");
        // refund after the deadline with nothing submitted (the squatter keeps its stake, earns nothing)
        (id, t) = postETHWithStake(1 ether, 1 ether);
        _claim(id, t);
        vm.warp(t.deadline + 1);
        escrow.refund(id, t, worker);
        vm.assertEq(_locked(), 0, "refund releases");
        // resolveExpired: nobody slashes for the arbiter's silence
        (id, t) = postETHWithStake(1 ether, 1 ether);
        _claim(id, t);
        vm.prank(worker);
        escrow.submit(id, t, worker, RESULT);
        vm.prank(poster);
        escrow.reject(id, t, worker, 0);
        vm.warp(block.timestamp + escrow.ARBITER_TIMEOUT() + 1);
        vm.prank(worker);
        escrow.resolveExpired(id, t, worker);
        vm.assertEq(_locked(), 0, "resolveExpired releases");
        vm.assertEq(registry.stakeOf(AGENT, worker), 10 ether, "nothing slashed");
    }

    // --- slashing is bounded by the lock ---

    function test_resolve_slashIsCappedAtTheLock() public {
        _stake(5 ether);
        (uint256 id, IBountyEscrow.Terms memory t) = postETHWithStake(1 ether, 2 ether);
        _claim(id, t);
        vm.prank(worker);
        escrow.submit(id, t, worker, RESULT);
        vm.prank(poster);
        escrow.reject(id, t, worker, 0);
        vm.expectRevert(
            abi.encodeWithSelector(IBountyEscrow.SlashAboveLock.selector, id, uint256(2 ether), uint256(2 ether + 1))
        );
        vm.prank(arbiter);
        escrow.resolve(id, t, worker, 0, 2 ether + 1);
        vm.prank(arbiter);
        escrow.resolve(id, t, worker, 5000, 1 ether);
        vm.assertEq(registry.stakeOf(AGENT, worker), 4 ether, "one ether slashed");
        vm.assertEq(_locked(), 0, "lock ended");
    }

    function test_resolve_cannotSlashAWorkerThePosterAssigned() public {
        _stake(5 ether);
        (uint256 id, IBountyEscrow.Terms memory t) = postETHWithStake(1 ether, 2 ether);
        vm.prank(poster);
        escrow.assign(id, t, worker);
        vm.assertEq(_locked(), 0, "an assignment locks nothing");
        vm.prank(worker);
        escrow.submit(id, t, worker, RESULT);
        vm.prank(poster);
        escrow.reject(id, t, worker, 0);
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.UnknownLock.selector, id));
        vm.prank(arbiter);
        escrow.resolve(id, t, worker, 0, 1 ether);
        vm.prank(arbiter);
        escrow.resolve(id, t, worker, 0, 0);
        vm.assertEq(registry.stakeOf(AGENT, worker), 5 ether, "untouched");
    }

    // --- squatting does not pay ---

    /// The attack measured at 66f817e: claim an open bounty, dispute at once without work, and
    /// take half after the arbiter's silence. Only a submission can be disputed now.
    function test_squatter_cannotForceASplitWithoutSubmitting() public {
        (uint256 id, IBountyEscrow.Terms memory t) = postETH(10 ether);
        vm.prank(stranger);
        escrow.claim(id, t, AGENT);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.NotSubmitted.selector, id));
        vm.prank(stranger);
        escrow.dispute(id, t, stranger, 0);
        vm.warp(t.deadline + 1);
        uint256 before = poster.balance;
        escrow.refund(id, t, stranger);
        vm.assertEq(poster.balance - before, 10 ether, "the poster gets everything back");
    }

    /// The reverse, found in review: a poster whose arbiter is its own second wallet disputes a
    /// claim at once and has the arbiter slash the lock before the worker has done anything.
    /// Nothing can be disputed before a submission, so a worker that doubts the arbiter walks
    /// away unslashed.
    function test_standInArbiter_cannotSlashBeforeASubmission() public {
        _stake(2 ether);
        (uint256 id, IBountyEscrow.Terms memory t) = postETHWithStake(1 ether, 2 ether);
        _claim(id, t);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.NotSubmitted.selector, id));
        vm.prank(poster);
        escrow.dispute(id, t, worker, keccak256("give me the stake"));
        vm.expectRevert(wrongStatus(id, IBountyEscrow.Status.Assigned));
        vm.prank(arbiter);
        escrow.resolve(id, t, worker, 0, 2 ether);
        vm.warp(t.deadline + 1);
        escrow.refund(id, t, worker);
        vm.assertEq(registry.stakeOf(AGENT, worker), 2 ether, "the worker kept its stake");
        vm.assertEq(_locked(), 0, "and its lock ended");
    }

    // --- arbiter sanity ---

    function test_arbiter_isNeverAParty() public {
        uint64 deadline = uint64(block.timestamp) + DURATION;
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.ArbiterIsParty.selector, poster));
        vm.prank(poster);
        escrow.post{value: 1 ether}(address(0), 1 ether, poster, deadline, REVIEW, 0, SPEC, nextSalt());

        (uint256 id, IBountyEscrow.Terms memory t) = postETH(1 ether);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.ArbiterIsParty.selector, arbiter));
        vm.prank(arbiter);
        escrow.claim(id, t, AGENT);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.ArbiterIsParty.selector, arbiter));
        vm.prank(poster);
        escrow.assign(id, t, arbiter);
    }
}

/// @notice The minimum-stake lifecycle alone, with the worker's stake bonded in setUp, so the
/// snapshot's figure for it is the four calls and nothing else.
contract BountyEscrowStakeGasTest is EscrowFixture {
    function setUp() public override {
        super.setUp();
        vm.startPrank(worker);
        registry.bind(AGENT, "proof");
        registry.stake{value: 1 ether}(AGENT, 1 ether);
        vm.stopPrank();
    }

    /// post → claim (locking 1 ETH of stake) → submit → accept (releasing it), in ETH. The
    /// receipts' total on a chain is measured by contracts.BenchmarkHappyPathGas and held to
    /// 230,000 gas by contracts.TestHappyPathGasBudget; this keeps the calls in the snapshot.
    function test_gas_ETHLifecycleWithMinStake() public {
        IBountyEscrow.Terms memory t = termsOf(poster, address(0), 1 ether, 1 ether);
        vm.prank(poster);
        uint256 id = escrow.post{value: 1 ether}(address(0), 1 ether, arbiter, t.deadline, REVIEW, 1 ether, SPEC, SALT);
        vm.prank(worker);
        escrow.claim(id, t, AGENT);
        vm.prank(worker);
        escrow.submit(id, t, worker, RESULT);
        vm.prank(poster);
        escrow.accept(id, t, worker);
        vm.assertEq(registry.recordOf(AGENT, worker).locked, 0, "released");
    }
}

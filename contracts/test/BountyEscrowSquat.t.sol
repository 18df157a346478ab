// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {EscrowFixture} from "./lib/Fixtures.sol";
import {IBountyEscrow} from "../src/IBountyEscrow.sol";

/// @notice Squatting, the attack of issue 25 written as a test first: a bounty with no minimum
/// stake (the CLI's default) could be claimed by anyone, after which the poster could neither
/// cancel nor assign, and the funds waited for the deadline. Now such a claim holds the
/// bounty for CLAIM_WINDOW without a submission, then the poster may unclaim it.
contract BountyEscrowSquatTest is EscrowFixture {
    event Unclaimed(uint256 indexed id, address indexed worker);

    address internal squatter = makeAddr("squatter");
    uint256 internal window;

    function setUp() public override {
        super.setUp();
        window = escrow.CLAIM_WINDOW();
    }

    function _squat(uint256 amount) internal returns (uint256 id, IBountyEscrow.Terms memory t) {
        (id, t) = postETH(amount);
        vm.prank(squatter);
        escrow.claim(id, t, bytes32(0));
    }

    function _unclaimed(uint256 amount) internal returns (uint256 id, IBountyEscrow.Terms memory t) {
        (id, t) = _squat(amount);
        vm.warp(block.timestamp + window + 1);
        vm.prank(poster);
        escrow.unclaim(id, t, squatter);
    }

    function test_squatter_cannotFreezeAnUnstakedBounty() public {
        (uint256 id, IBountyEscrow.Terms memory t) = _squat(5 ether);

        // While the claim window runs, the poster cannot cancel or assign: the claim holds.
        vm.startPrank(poster);
        vm.expectRevert(wrongStatus(id, IBountyEscrow.Status.Assigned));
        escrow.cancel(id, t);
        vm.expectRevert(wrongStatus(id, IBountyEscrow.Status.Assigned));
        escrow.assign(id, t, worker);
        vm.stopPrank();

        // After it, the poster takes the bounty back, long before the deadline.
        vm.warp(block.timestamp + window + 1);
        vm.assertGt(t.deadline, block.timestamp, "before the deadline");
        vm.prank(poster);
        escrow.unclaim(id, t, squatter);
        assertStatus(id, IBountyEscrow.Status.Open);

        // ... assigns an honest worker, who is paid.
        uint256 before = worker.balance;
        vm.prank(poster);
        escrow.assign(id, t, worker);
        vm.prank(worker);
        escrow.submit(id, t, worker, RESULT);
        vm.prank(poster);
        escrow.accept(id, t, worker);
        vm.assertEq(worker.balance - before, 5 ether - feeOf(5 ether), "the honest worker is paid");
        vm.assertEq(address(escrow).balance, feeOf(5 ether), "only the fee remains");
    }

    /// The squatter sent away cannot claim again before the poster's next step: for the claim
    /// window after an unclaim only the poster moves the bounty; then claims reopen.
    function test_squatter_cannotWinTheRaceAfterAnUnclaim() public {
        (uint256 id, IBountyEscrow.Terms memory t) = _unclaimed(1 ether);
        uint256 opensAt = block.timestamp + window;
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.ClaimsNotOpen.selector, id, opensAt));
        vm.prank(squatter);
        escrow.claim(id, t, bytes32(0));

        vm.warp(opensAt - 1);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.ClaimsNotOpen.selector, id, opensAt));
        vm.prank(worker);
        escrow.claim(id, t, AGENT);

        vm.warp(opensAt);
        vm.prank(worker);
        escrow.claim(id, t, AGENT);
        vm.assertEq(escrow.bountyOf(id).commitment, escrow.commitmentOf(t, worker), "claimed once claims reopen");
    }

    function test_unclaim_thenCancelRefundsInFull() public {
        (uint256 id, IBountyEscrow.Terms memory t) = _unclaimed(2 ether);
        uint256 before = poster.balance;
        vm.prank(poster);
        escrow.cancel(id, t);
        vm.assertEq(poster.balance - before, 2 ether, "refunded in full");
        vm.assertEq(address(escrow).balance, 0, "nothing left");
    }

    function test_unclaim_reopensAndEmits() public {
        (uint256 id, IBountyEscrow.Terms memory t) = _squat(1 ether);
        vm.warp(block.timestamp + window + 1);
        vm.expectEmit(true, true, false, true, address(escrow));
        emit Unclaimed(id, squatter);
        vm.prank(poster);
        escrow.unclaim(id, t, squatter);
        IBountyEscrow.Bounty memory b = escrow.bountyOf(id);
        vm.assertEq(b.commitment, escrow.commitmentOf(t, address(0)), "no worker");
        vm.assertEq(uint256(b.since), block.timestamp + window, "claims reopen after the poster's turn");
        vm.assertEq(address(escrow).balance, 1 ether, "nothing paid");
    }

    /// A worker the poster assigned itself holds the bounty no longer than a claimer.
    function test_unclaim_anAssignedWorker() public {
        (uint256 id, IBountyEscrow.Terms memory t) = postETH(1 ether);
        vm.prank(poster);
        escrow.assign(id, t, worker);
        vm.warp(block.timestamp + window + 1);
        vm.prank(poster);
        escrow.unclaim(id, t, worker);
        assertStatus(id, IBountyEscrow.Status.Open);
    }

    function test_unclaim_reverts() public {
        (uint256 id, IBountyEscrow.Terms memory t) = _squat(1 ether);
        uint256 endsAt = block.timestamp + window;

        // Within the window, at its last second included.
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.ClaimWindowOpen.selector, id, endsAt));
        vm.prank(poster);
        escrow.unclaim(id, t, squatter);
        vm.warp(endsAt);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.ClaimWindowOpen.selector, id, endsAt));
        vm.prank(poster);
        escrow.unclaim(id, t, squatter);

        vm.warp(endsAt + 1);
        // Only the poster; not the worker, not the arbiter.
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.NotPoster.selector, id, squatter));
        vm.prank(squatter);
        escrow.unclaim(id, t, squatter);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.NotPoster.selector, id, arbiter));
        vm.prank(arbiter);
        escrow.unclaim(id, t, squatter);
        // The bounty's worker, not another.
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.TermsMismatch.selector, id));
        vm.prank(poster);
        escrow.unclaim(id, t, worker);

        // An open bounty has nobody to unclaim.
        (uint256 open, IBountyEscrow.Terms memory ot) = postETH(1 ether);
        vm.expectRevert(wrongStatus(open, IBountyEscrow.Status.Open));
        vm.prank(poster);
        escrow.unclaim(open, ot, address(0));
    }

    /// The worker cannot be robbed of a submitted job: once it submits, even a second before
    /// the window ends or long after it, the poster reviews the work and cannot unclaim.
    function test_unclaim_neverAfterASubmission() public {
        (uint256 id, IBountyEscrow.Terms memory t) = _squat(1 ether);
        vm.warp(block.timestamp + window);
        vm.prank(squatter);
        escrow.submit(id, t, squatter, RESULT);
        vm.warp(block.timestamp + 30 days);
        vm.expectRevert(wrongStatus(id, IBountyEscrow.Status.Submitted));
        vm.prank(poster);
        escrow.unclaim(id, t, squatter);
    }

    /// A claim that locked stake holds until the deadline: the poster set its price.
    function test_unclaim_notAStakedClaim() public {
        vm.startPrank(worker);
        registry.bind(AGENT, "proof");
        registry.stake{value: 1 ether}(AGENT, 1 ether);
        vm.stopPrank();
        (uint256 id, IBountyEscrow.Terms memory t) = postETHWithStake(1 ether, MIN_STAKE);
        vm.prank(worker);
        escrow.claim(id, t, AGENT);
        vm.warp(t.deadline);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.StakedClaim.selector, id, MIN_STAKE));
        vm.prank(poster);
        escrow.unclaim(id, t, worker);
        vm.assertEq(registry.recordOf(AGENT, worker).locked, MIN_STAKE, "still locked");
    }

    /// Past the deadline the poster may still unclaim, and the funds come back either way.
    function test_unclaim_afterTheDeadlineThenRefund() public {
        (uint256 id, IBountyEscrow.Terms memory t) = _squat(1 ether);
        vm.warp(t.deadline + 1);
        vm.prank(poster);
        escrow.unclaim(id, t, squatter);
        uint256 before = poster.balance;
        escrow.refund(id, t, address(0));
        vm.assertEq(poster.balance - before, 1 ether, "refunded");
    }
}

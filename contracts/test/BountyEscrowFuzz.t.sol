// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {EscrowFixture} from "./lib/Fixtures.sol";
import {IBountyEscrow} from "../src/IBountyEscrow.sol";
import {FeeOnTransferToken} from "./mocks/Tokens.sol";

/// @notice Fuzz tests on amounts, splits and timings.
contract BountyEscrowFuzzTest is EscrowFixture {
    function testFuzz_accept_conservesAmount(uint96 rawAmount, uint16 rawFee) public {
        uint256 amount = bound(rawAmount, 1, 1_000 ether);
        uint16 fee = uint16(bound(rawFee, 0, escrow.MAX_FEE_BPS()));
        vm.prank(owner);
        escrow.setFee(fee);
        (uint256 id, IBountyEscrow.Terms memory t) = submitted(amount);
        uint256 before = worker.balance;
        vm.prank(poster);
        escrow.accept(id, t, worker);
        uint256 paid = worker.balance - before;
        vm.assertEq(paid + escrow.feesOwed(address(0)), amount, "payout + fee == amount");
        vm.assertEq(escrow.feesOwed(address(0)), amount * fee / 10_000, "fee rounds down");
        vm.assertEq(address(escrow).balance, escrow.feesOwed(address(0)), "only the fee stays");
    }

    function testFuzz_resolve_splitConservesAmount(uint96 rawAmount, uint16 rawBps) public {
        uint256 amount = bound(rawAmount, 1, 1_000 ether);
        uint16 bps = uint16(bound(rawBps, 0, 10_000));
        (uint256 id, IBountyEscrow.Terms memory t) = disputed(amount);
        uint256 workerBefore = worker.balance;
        uint256 posterBefore = poster.balance;
        vm.prank(arbiter);
        escrow.resolve(id, t, worker, bps, 0);
        uint256 toWorker = worker.balance - workerBefore;
        uint256 toPoster = poster.balance - posterBefore;
        uint256 fee = escrow.feesOwed(address(0));
        vm.assertEq(toWorker + toPoster + fee, amount, "worker + poster + fee == amount");
        uint256 share = amount * bps / 10_000;
        vm.assertEq(toPoster, amount - share, "poster gets the rest of the split");
        vm.assertEq(fee, share * FEE_BPS / 10_000, "fee only on the worker's share");
    }

    function testFuzz_resolve_rejectsSplitsAboveWhole(uint16 bps) public {
        vm.assume(bps > 10_000);
        (uint256 id, IBountyEscrow.Terms memory t) = disputed(1 ether);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.InvalidSplit.selector, bps));
        vm.prank(arbiter);
        escrow.resolve(id, t, worker, bps, 0);
    }

    function testFuzz_submit_onlyByDeadline(uint64 rawDelay) public {
        uint256 delay = bound(rawDelay, 0, 2 * DURATION);
        (uint256 id, IBountyEscrow.Terms memory t) = claimed(1 ether);
        vm.warp(START + delay);
        vm.prank(worker);
        if (START + delay > t.deadline) {
            vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.DeadlinePassed.selector, id, t.deadline));
            escrow.submit(id, t, worker, RESULT);
            assertStatus(id, IBountyEscrow.Status.Assigned);
        } else {
            escrow.submit(id, t, worker, RESULT);
            assertStatus(id, IBountyEscrow.Status.Submitted);
        }
    }

    function testFuzz_release_onlyAfterReviewWindow(uint32 rawDelay) public {
        uint256 delay = bound(rawDelay, 0, 3 * uint256(REVIEW));
        (uint256 id, IBountyEscrow.Terms memory t) = submitted(1 ether);
        uint256 submittedAt = block.timestamp;
        vm.warp(submittedAt + delay);
        vm.prank(worker);
        if (delay <= REVIEW) {
            vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.ReviewWindowOpen.selector, id, submittedAt + REVIEW));
            escrow.release(id, t, worker);
        } else {
            escrow.release(id, t, worker);
            assertStatus(id, IBountyEscrow.Status.Released);
        }
    }

    /// Unclaim waits out the claim window, and never takes a submitted job: at any delay, a
    /// worker that submitted keeps its bounty; one that did not may be sent away only after
    /// the window, with the whole amount still in the escrow for the poster.
    function testFuzz_unclaim_onlyAfterClaimWindowAndBeforeASubmission(uint32 rawDelay, bool submitFirst) public {
        uint256 window = escrow.CLAIM_WINDOW();
        uint256 delay = bound(rawDelay, 0, 3 * window);
        (uint256 id, IBountyEscrow.Terms memory t) = claimed(1 ether);
        uint256 claimedAt = block.timestamp;
        vm.warp(claimedAt + delay);
        if (submitFirst) {
            vm.prank(worker);
            escrow.submit(id, t, worker, RESULT);
            vm.expectRevert(wrongStatus(id, IBountyEscrow.Status.Submitted));
        } else if (delay <= window) {
            vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.ClaimWindowOpen.selector, id, claimedAt + window));
        }
        vm.prank(poster);
        escrow.unclaim(id, t, worker);
        if (submitFirst || delay <= window) return;
        assertStatus(id, IBountyEscrow.Status.Open);
        vm.assertEq(address(escrow).balance, 1 ether, "nothing paid by an unclaim");
        uint256 before = poster.balance;
        vm.prank(poster);
        escrow.cancel(id, t);
        vm.assertEq(poster.balance - before, 1 ether, "the poster gets it all back, once");
    }

    function testFuzz_reject_onlyWithinReviewWindow(uint32 rawDelay) public {
        uint256 delay = bound(rawDelay, 0, 3 * uint256(REVIEW));
        (uint256 id, IBountyEscrow.Terms memory t) = submitted(1 ether);
        uint256 submittedAt = block.timestamp;
        vm.warp(submittedAt + delay);
        vm.prank(poster);
        if (delay > REVIEW) {
            vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.ReviewWindowClosed.selector, id, submittedAt + REVIEW));
            escrow.reject(id, t, worker, 0);
        } else {
            escrow.reject(id, t, worker, 0);
            assertStatus(id, IBountyEscrow.Status.Disputed);
        }
    }

    function testFuzz_refund_onlyAfterDeadline(uint64 rawDelay, bool assignFirst) public {
        uint256 delay = bound(rawDelay, 0, 2 * DURATION);
        (uint256 id, IBountyEscrow.Terms memory t) = postETH(1 ether);
        address w = address(0);
        if (assignFirst) {
            vm.prank(poster);
            escrow.assign(id, t, worker);
            w = worker;
        }
        vm.warp(START + delay);
        if (START + delay <= t.deadline) {
            vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.DeadlineNotPassed.selector, id, t.deadline));
            escrow.refund(id, t, w);
        } else {
            uint256 before = poster.balance;
            escrow.refund(id, t, w);
            vm.assertEq(poster.balance - before, 1 ether, "refunded in full");
        }
    }

    function testFuzz_post_feeOnTransferRecordsWhatArrived(uint96 rawAmount, uint16 rawTokenFee) public {
        uint256 amount = bound(rawAmount, 1_000, 1_000_000 ether);
        uint256 tokenFee = bound(rawTokenFee, 1, 5_000);
        FeeOnTransferToken fot = new FeeOnTransferToken(tokenFee);
        fot.mint(poster, amount);
        vm.prank(poster);
        fot.approve(address(escrow), amount);
        uint256 arrived = amount - amount * tokenFee / 10_000;
        IBountyEscrow.Terms memory t = termsOf(poster, address(fot), arrived, 0);
        vm.prank(poster);
        uint256 id = escrow.post(address(fot), amount, arbiter, t.deadline, REVIEW, 0, SPEC, nextSalt());
        vm.assertEq(fot.balanceOf(address(escrow)), arrived, "escrow holds what arrived");
        // The recorded terms carry the arrived amount: settling with them balances to zero.
        vm.prank(poster);
        escrow.cancel(id, t);
        vm.assertEq(fot.balanceOf(address(escrow)), 0, "nothing left behind");
    }

    function testFuzz_claim_minimumStake(uint96 rawStake, uint96 rawMin) public {
        uint256 minStake = bound(rawMin, 1, 100 ether);
        uint256 stakeAmt = bound(rawStake, 1, 100 ether);
        (uint256 id, IBountyEscrow.Terms memory t) = postETHWithStake(1 ether, minStake);
        vm.deal(worker, 200 ether);
        vm.startPrank(worker);
        registry.bind(AGENT, "proof");
        registry.stake{value: stakeAmt}(AGENT, stakeAmt);
        if (stakeAmt < minStake) {
            vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.InsufficientStake.selector, AGENT, stakeAmt, minStake));
        }
        escrow.claim(id, t, AGENT);
        vm.stopPrank();
    }
}

// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {EscrowFixture} from "./lib/Fixtures.sol";
import {BountyEscrow} from "../src/BountyEscrow.sol";
import {IBountyEscrow} from "../src/IBountyEscrow.sol";
import {Owned} from "../src/Owned.sol";
import {StakeRegistry} from "../src/StakeRegistry.sol";
import {IStakeRegistry} from "../src/IStakeRegistry.sol";
import {RejectingReceiver, GasGuzzler} from "./mocks/Receivers.sol";
import {FalseToken} from "./mocks/Tokens.sol";

contract BountyEscrowTest is EscrowFixture {
    event Posted(uint256 indexed id, address indexed poster, address indexed token, IBountyEscrow.Terms terms);
    event Cancelled(uint256 indexed id, uint256 refund);
    event Claimed(uint256 indexed id, address indexed worker, bytes32 agentId);
    event Assigned(uint256 indexed id, address indexed worker);
    event Submitted(uint256 indexed id, address indexed worker, bytes32 resultHash);
    event Accepted(uint256 indexed id, address indexed worker, uint256 payout, uint256 fee);
    event Released(uint256 indexed id, address indexed worker, uint256 payout, uint256 fee);
    event Disputed(uint256 indexed id, address indexed by, bytes32 reasonHash);
    event Resolved(uint256 indexed id, uint16 workerBps, uint256 workerPayout, uint256 posterRefund, uint256 fee);
    event Refunded(uint256 indexed id, uint256 refund);
    event Withdrawn(address indexed account, address indexed token, uint256 amount);
    event Credited(address indexed account, address indexed token, uint256 amount);
    event FeesWithdrawn(address indexed treasury, address indexed token, uint256 amount);

    // --- constructor and administration ---

    function test_constructor_setsConfig() public view {
        vm.assertEq(address(escrow.stakeRegistry()), address(registry), "registry");
        vm.assertEq(registry.locker(), address(escrow), "the escrow created its registry and is its locker");
        vm.assertEq(uint256(registry.unbondDelay()), UNBOND_DELAY, "unbond delay");
        vm.assertEq(escrow.owner(), owner, "owner");
        vm.assertEq(escrow.treasury(), treasury, "treasury");
        vm.assertEq(uint256(escrow.feeBps()), FEE_BPS, "fee");
    }

    function test_constructor_revertsOnZeroAddresses() public {
        vm.expectRevert(IBountyEscrow.ZeroAddress.selector);
        new BountyEscrow(address(0), treasury, 0, address(0), UNBOND_DELAY, MIN_STAKE, jobLocker);
        vm.expectRevert(IBountyEscrow.ZeroAddress.selector);
        new BountyEscrow(owner, address(0), 0, address(0), UNBOND_DELAY, MIN_STAKE, jobLocker);
    }

    function test_constructor_revertsOnFeeTooHigh() public {
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.FeeTooHigh.selector, uint16(1001), uint16(1000)));
        new BountyEscrow(owner, treasury, 1001, address(0), UNBOND_DELAY, MIN_STAKE, jobLocker);
    }

    function test_setFee_appliesToNewBountiesOnly() public {
        (uint256 oldId, IBountyEscrow.Terms memory oldTerms) = submitted(1 ether);
        vm.prank(owner);
        escrow.setFee(500);
        vm.assertEq(uint256(escrow.feeBps()), 500, "fee");
        uint256 before = worker.balance;
        vm.prank(poster);
        escrow.accept(oldId, oldTerms, worker);
        vm.assertEq(worker.balance - before, 1 ether - feeOf(1 ether), "old bounty keeps its fee");
        (, IBountyEscrow.Terms memory t) = postETH(1 ether);
        vm.assertEq(uint256(t.feeBps), 500, "new bounty takes the new fee");
    }

    function test_setFee_revertsForNonOwnerAndAboveCap() public {
        vm.expectRevert(abi.encodeWithSelector(Owned.NotOwner.selector, stranger));
        vm.prank(stranger);
        escrow.setFee(1);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.FeeTooHigh.selector, uint16(1001), uint16(1000)));
        vm.prank(owner);
        escrow.setFee(1001);
    }

    function test_setTreasury_movesTheRightToWithdrawFees() public {
        (uint256 id, IBountyEscrow.Terms memory t) = submitted(1 ether);
        vm.prank(poster);
        escrow.accept(id, t, worker);
        address next = makeAddr("next treasury");
        vm.prank(owner);
        escrow.setTreasury(next);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.NotTreasury.selector, treasury));
        vm.prank(treasury);
        escrow.withdrawFees(address(0));
        vm.prank(next);
        escrow.withdrawFees(address(0));
        vm.assertEq(next.balance, feeOf(1 ether) - 1, "new treasury takes the fees");
    }

    function test_setTreasury_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(Owned.NotOwner.selector, stranger));
        vm.prank(stranger);
        escrow.setTreasury(stranger);
        vm.expectRevert(IBountyEscrow.ZeroAddress.selector);
        vm.prank(owner);
        escrow.setTreasury(address(0));
    }

    function test_transferOwnership_takesTwoSteps() public {
        vm.expectRevert(abi.encodeWithSelector(Owned.NotOwner.selector, stranger));
        vm.prank(stranger);
        escrow.transferOwnership(stranger);
        vm.prank(owner);
        escrow.transferOwnership(stranger);
        vm.assertEq(escrow.owner(), owner, "nothing moves before the successor accepts");
        vm.assertEq(escrow.pendingOwner(), stranger, "pending");
        vm.expectRevert(abi.encodeWithSelector(Owned.NotPendingOwner.selector, treasury));
        vm.prank(treasury);
        escrow.acceptOwnership();
        vm.prank(stranger);
        escrow.acceptOwnership();
        vm.assertEq(escrow.owner(), stranger, "owner");
        vm.assertEq(escrow.pendingOwner(), address(0), "offer used");
        vm.expectRevert(abi.encodeWithSelector(Owned.NotOwner.selector, owner));
        vm.prank(owner);
        escrow.setFee(1);
    }

    // --- post ---

    function test_post_ETHRecordsTermsAndEmits() public {
        IBountyEscrow.Terms memory t = termsOf(poster, address(0), 2 ether, 0);
        uint256 want = escrow.bountyId(poster, SALT);
        vm.expectEmit(true, true, true, true, address(escrow));
        emit Posted(want, poster, address(0), t);
        vm.prank(poster);
        uint256 id = escrow.post{value: 2 ether}(address(0), 2 ether, arbiter, t.deadline, REVIEW, 0, SPEC, SALT);
        vm.assertEq(id, want, "id");
        vm.assertEq(uint256(escrow.bountyOf(id).since), block.timestamp, "open since now");
        vm.assertEq(escrow.bountyOf(id).commitment, bytes26(keccak256(abi.encode(t, address(0)))), "commitment");
        vm.assertEq(escrow.commitmentOf(t, address(0)), escrow.bountyOf(id).commitment, "commitmentOf agrees");
        vm.assertEq(address(escrow).balance, 2 ether, "escrow holds the ETH");
        assertStatus(id, IBountyEscrow.Status.Open);
    }

    function test_post_revertsOnASaltUsedBefore() public {
        IBountyEscrow.Terms memory t = termsOf(poster, address(0), 2 ether, 0);
        vm.prank(poster);
        uint256 id = escrow.post{value: 2 ether}(address(0), 2 ether, arbiter, t.deadline, REVIEW, 0, SPEC, SALT);
        // The same request again (a replay at another node holding the wallet): it reverts.
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.AlreadyPosted.selector, id));
        vm.prank(poster);
        escrow.post{value: 2 ether}(address(0), 2 ether, arbiter, t.deadline, REVIEW, 0, SPEC, SALT);
        vm.assertEq(address(escrow).balance, 2 ether, "paid once");
        // The same salt from another poster is another bounty.
        vm.deal(stranger, 1 ether);
        vm.prank(stranger);
        uint256 other = escrow.post{value: 1 ether}(address(0), 1 ether, arbiter, t.deadline, REVIEW, 0, SPEC, SALT);
        vm.assertTrue(other != id, "ids are per poster");
    }

    function testFuzz_bountyId_isNonZeroAndFitsInFiftyThreeBits(address who, bytes32 salt) public view {
        uint256 id = escrow.bountyId(who, salt);
        vm.assertTrue(id >= 1 && id <= 1 << 52, "in [1, 2^52]: exact in a JSON number");
    }

    function test_post_tokenPullsFunds() public {
        (uint256 id,) = postToken(5 ether);
        vm.assertEq(token.balanceOf(address(escrow)), 5 ether, "escrow holds the tokens");
        vm.assertEq(token.balanceOf(poster), 1_000_000 ether - 5 ether, "poster paid");
        assertStatus(id, IBountyEscrow.Status.Open);
    }

    function test_post_revertsOnBadArguments() public {
        uint64 deadline = uint64(block.timestamp) + DURATION;
        vm.startPrank(poster);
        vm.expectRevert(IBountyEscrow.InvalidAmount.selector);
        escrow.post(address(0), 0, arbiter, deadline, REVIEW, 0, SPEC, nextSalt());
        vm.expectRevert(IBountyEscrow.ZeroAddress.selector);
        escrow.post{value: 1}(address(0), 1, address(0), deadline, REVIEW, 0, SPEC, nextSalt());
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.InvalidDeadline.selector, uint64(block.timestamp)));
        escrow.post{value: 1}(address(0), 1, arbiter, uint64(block.timestamp), REVIEW, 0, SPEC, nextSalt());
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.InvalidReviewWindow.selector, uint32(0)));
        escrow.post{value: 1}(address(0), 1, arbiter, deadline, 0, 0, SPEC, nextSalt());
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.InvalidReviewWindow.selector, uint32(90 days + 1)));
        escrow.post{value: 1}(address(0), 1, arbiter, deadline, 90 days + 1, 0, SPEC, nextSalt());
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.InvalidValue.selector, uint256(1), uint256(2)));
        escrow.post{value: 1}(address(0), 2, arbiter, deadline, REVIEW, 0, SPEC, nextSalt());
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.InvalidValue.selector, uint256(1), uint256(0)));
        escrow.post{value: 1}(address(token), 2, arbiter, deadline, REVIEW, 0, SPEC, nextSalt());
        vm.stopPrank();
    }

    function test_post_revertsWithoutAllowance() public {
        vm.prank(stranger);
        vm.expectRevert(
            abi.encodeWithSelector(IBountyEscrow.TransferFailed.selector, address(token), address(escrow), uint256(1))
        );
        escrow.post(address(token), 1, arbiter, uint64(block.timestamp) + 1, REVIEW, 0, SPEC, nextSalt());
    }

    function test_post_revertsForTokenWithoutCode() public {
        address notAToken = makeAddr("not a token");
        vm.prank(poster);
        vm.expectRevert();
        escrow.post(notAToken, 1, arbiter, uint64(block.timestamp) + 1, REVIEW, 0, SPEC, nextSalt());
    }

    // --- cancel ---

    function test_cancel_refundsPosterInFull() public {
        (uint256 id, IBountyEscrow.Terms memory t) = postETH(3 ether);
        uint256 before = poster.balance;
        vm.expectEmit(true, false, false, true, address(escrow));
        emit Cancelled(id, 3 ether);
        vm.prank(poster);
        escrow.cancel(id, t);
        assertStatus(id, IBountyEscrow.Status.Cancelled);
        vm.assertEq(poster.balance - before, 3 ether, "poster refunded");
        vm.assertEq(escrow.feesOwed(address(0)), 0, "no fee on a cancel");
        vm.assertEq(address(escrow).balance, 0, "escrow empty");
    }

    function test_cancel_reverts() public {
        (uint256 id, IBountyEscrow.Terms memory t) = postETH(1 ether);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.NotPoster.selector, id, stranger));
        vm.prank(stranger);
        escrow.cancel(id, t);

        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.UnknownBounty.selector, uint256(99)));
        vm.prank(poster);
        escrow.cancel(99, t);

        IBountyEscrow.Terms memory forged = termsOf(poster, address(0), 100 ether, 0); // a copy, not an alias of t
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.TermsMismatch.selector, id));
        vm.prank(poster);
        escrow.cancel(id, forged);

        vm.prank(worker);
        escrow.claim(id, t, AGENT);
        vm.expectRevert(wrongStatus(id, IBountyEscrow.Status.Assigned));
        vm.prank(poster);
        escrow.cancel(id, t);
    }

    // --- claim and assign ---

    function test_claim_assignsCaller() public {
        (uint256 id, IBountyEscrow.Terms memory t) = postETH(1 ether);
        vm.expectEmit(true, true, false, true, address(escrow));
        emit Claimed(id, worker, AGENT);
        vm.prank(worker);
        escrow.claim(id, t, AGENT);
        vm.assertEq(escrow.bountyOf(id).commitment, escrow.commitmentOf(t, worker), "committed to the worker");
        assertStatus(id, IBountyEscrow.Status.Assigned);
    }

    function test_claim_checksMinimumStake() public {
        (uint256 id, IBountyEscrow.Terms memory t) = postETHWithStake(1 ether, 5 ether);
        // Not bound: the registry's own error, passed on.
        vm.expectRevert(
            abi.encodeWithSelector(IStakeRegistry.WrongStatus.selector, AGENT, worker, IStakeRegistry.Status.None)
        );
        vm.prank(worker);
        escrow.claim(id, t, AGENT);

        vm.startPrank(worker);
        registry.bind(AGENT, "proof");
        registry.stake{value: 4 ether}(AGENT, 4 ether);
        vm.expectRevert(
            abi.encodeWithSelector(IBountyEscrow.InsufficientStake.selector, AGENT, uint256(4 ether), uint256(5 ether))
        );
        escrow.claim(id, t, AGENT);
        registry.stake{value: 1 ether}(AGENT, 1 ether);
        escrow.claim(id, t, AGENT);
        vm.stopPrank();
        assertStatus(id, IBountyEscrow.Status.Assigned);
    }

    function test_claim_stakeOfAnotherControllerDoesNotCount() public {
        (uint256 id, IBountyEscrow.Terms memory t) = postETHWithStake(1 ether, 1 ether);
        vm.startPrank(stranger);
        vm.deal(stranger, 10 ether);
        registry.bind(AGENT, "squatter");
        registry.stake{value: 5 ether}(AGENT, 5 ether);
        vm.stopPrank();
        vm.expectRevert(
            abi.encodeWithSelector(IStakeRegistry.WrongStatus.selector, AGENT, worker, IStakeRegistry.Status.None)
        );
        vm.prank(worker);
        escrow.claim(id, t, AGENT);
    }

    function test_claim_passesOnWhyTheRegistryRefusedTheLock() public {
        (uint256 id, IBountyEscrow.Terms memory t) = postETHWithStake(1 ether, 1 ether);
        vm.startPrank(worker);
        registry.bind(AGENT, "proof");
        registry.stake{value: 2 ether}(AGENT, 2 ether);
        registry.revoke(AGENT);
        vm.expectRevert(
            abi.encodeWithSelector(IStakeRegistry.WrongStatus.selector, AGENT, worker, IStakeRegistry.Status.Revoked)
        );
        escrow.claim(id, t, AGENT);
        vm.stopPrank();
    }

    function test_constructor_fixesTheMinimumStake() public view {
        vm.assertEq(registry.minStake(), MIN_STAKE, "the deployment's minimum stake, read by every node");
    }

    function test_claim_reverts() public {
        (uint256 id, IBountyEscrow.Terms memory t) = postETH(1 ether);
        vm.warp(t.deadline + 1);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.DeadlinePassed.selector, id, t.deadline));
        vm.prank(worker);
        escrow.claim(id, t, AGENT);

        (uint256 id2, IBountyEscrow.Terms memory t2) = claimed(1 ether);
        vm.expectRevert(wrongStatus(id2, IBountyEscrow.Status.Assigned));
        vm.prank(stranger);
        escrow.claim(id2, t2, AGENT);
    }

    function test_assign_setsWorker() public {
        (uint256 id, IBountyEscrow.Terms memory t) = postETH(1 ether);
        vm.expectEmit(true, true, false, false, address(escrow));
        emit Assigned(id, worker);
        vm.prank(poster);
        escrow.assign(id, t, worker);
        vm.assertEq(escrow.bountyOf(id).commitment, escrow.commitmentOf(t, worker), "committed to the worker");
        assertStatus(id, IBountyEscrow.Status.Assigned);
    }

    function test_assign_reverts() public {
        (uint256 id, IBountyEscrow.Terms memory t) = postETH(1 ether);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.NotPoster.selector, id, worker));
        vm.prank(worker);
        escrow.assign(id, t, worker);
        vm.expectRevert(IBountyEscrow.ZeroAddress.selector);
        vm.prank(poster);
        escrow.assign(id, t, address(0));
        vm.warp(t.deadline + 1);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.DeadlinePassed.selector, id, t.deadline));
        vm.prank(poster);
        escrow.assign(id, t, worker);

        (uint256 id2, IBountyEscrow.Terms memory t2) = claimed(1 ether);
        vm.expectRevert(wrongStatus(id2, IBountyEscrow.Status.Assigned));
        vm.prank(poster);
        escrow.assign(id2, t2, stranger);
    }

    // --- submit ---

    function test_submit_recordsTimeAndEmits() public {
        (uint256 id, IBountyEscrow.Terms memory t) = claimed(1 ether);
        vm.warp(block.timestamp + 1 hours);
        vm.expectEmit(true, true, false, true, address(escrow));
        emit Submitted(id, worker, RESULT);
        vm.prank(worker);
        escrow.submit(id, t, worker, RESULT);
        IBountyEscrow.Bounty memory s = escrow.bountyOf(id);
        vm.assertEq(uint256(s.since), block.timestamp, "submitted at");
        assertStatus(id, IBountyEscrow.Status.Submitted);
    }

    function test_submit_atDeadlineIsOnTime() public {
        (uint256 id, IBountyEscrow.Terms memory t) = claimed(1 ether);
        vm.warp(t.deadline);
        vm.prank(worker);
        escrow.submit(id, t, worker, RESULT);
        assertStatus(id, IBountyEscrow.Status.Submitted);
    }

    function test_submit_reverts() public {
        (uint256 id, IBountyEscrow.Terms memory t) = claimed(1 ether);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.NotWorker.selector, id, poster));
        vm.prank(poster);
        escrow.submit(id, t, worker, RESULT);
        vm.warp(t.deadline + 1);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.DeadlinePassed.selector, id, t.deadline));
        vm.prank(worker);
        escrow.submit(id, t, worker, RESULT);

        (uint256 id2, IBountyEscrow.Terms memory t2) = submitted(1 ether);
        vm.expectRevert(wrongStatus(id2, IBountyEscrow.Status.Submitted));
        vm.prank(worker);
        escrow.submit(id2, t2, worker, RESULT);
    }

    // --- accept and release ---

    function test_accept_paysWorkerLessFee() public {
        (uint256 id, IBountyEscrow.Terms memory t) = submitted(10 ether);
        uint256 fee = feeOf(10 ether);
        uint256 before = worker.balance;
        vm.expectEmit(true, true, false, true, address(escrow));
        emit Accepted(id, worker, 10 ether - fee, fee);
        vm.prank(poster);
        escrow.accept(id, t, worker);
        assertStatus(id, IBountyEscrow.Status.Accepted);
        vm.assertEq(worker.balance - before, 10 ether - fee, "worker paid");
        vm.assertEq(escrow.owed(worker, address(0)), 0, "nothing credited");
        vm.assertEq(escrow.feesOwed(address(0)), fee, "fee accrued");
        vm.assertEq(address(escrow).balance, fee, "escrow keeps only the fee");
    }

    function test_accept_paysTokens() public {
        (uint256 id, IBountyEscrow.Terms memory t) = postToken(10 ether);
        vm.prank(worker);
        escrow.claim(id, t, AGENT);
        vm.prank(worker);
        escrow.submit(id, t, worker, RESULT);
        vm.prank(poster);
        escrow.accept(id, t, worker);
        vm.assertEq(token.balanceOf(worker), 10 ether - feeOf(10 ether), "worker paid in tokens");
        vm.assertEq(token.balanceOf(address(escrow)), feeOf(10 ether), "fee stays");
    }

    function test_accept_reverts() public {
        (uint256 id, IBountyEscrow.Terms memory t) = claimed(1 ether);
        vm.expectRevert(wrongStatus(id, IBountyEscrow.Status.Assigned));
        vm.prank(poster);
        escrow.accept(id, t, worker);
        vm.prank(worker);
        escrow.submit(id, t, worker, RESULT);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.NotPoster.selector, id, worker));
        vm.prank(worker);
        escrow.accept(id, t, worker);
    }

    function test_release_paysWorkerAfterSilentReview() public {
        (uint256 id, IBountyEscrow.Terms memory t) = submitted(4 ether);
        uint256 endsAt = block.timestamp + REVIEW;
        vm.warp(endsAt);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.ReviewWindowOpen.selector, id, endsAt));
        vm.prank(worker);
        escrow.release(id, t, worker);
        vm.warp(endsAt + 1);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.NotWorker.selector, id, poster));
        vm.prank(poster);
        escrow.release(id, t, worker);
        uint256 before = worker.balance;
        vm.expectEmit(true, true, false, true, address(escrow));
        emit Released(id, worker, 4 ether - feeOf(4 ether), feeOf(4 ether));
        vm.prank(worker);
        escrow.release(id, t, worker);
        assertStatus(id, IBountyEscrow.Status.Released);
        vm.assertEq(worker.balance - before, 4 ether - feeOf(4 ether), "worker paid");
    }

    function test_release_revertsBeforeSubmission() public {
        (uint256 id, IBountyEscrow.Terms memory t) = claimed(1 ether);
        vm.warp(block.timestamp + 365 days);
        vm.expectRevert(wrongStatus(id, IBountyEscrow.Status.Assigned));
        vm.prank(worker);
        escrow.release(id, t, worker);
    }

    // --- reject, dispute, resolve ---

    function test_reject_opensDispute() public {
        (uint256 id, IBountyEscrow.Terms memory t) = submitted(1 ether);
        vm.expectEmit(true, true, false, true, address(escrow));
        emit Disputed(id, poster, keccak256("missing section"));
        vm.prank(poster);
        escrow.reject(id, t, worker, keccak256("missing section"));
        assertStatus(id, IBountyEscrow.Status.Disputed);
    }

    function test_reject_reverts() public {
        (uint256 id, IBountyEscrow.Terms memory t) = submitted(1 ether);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.NotPoster.selector, id, worker));
        vm.prank(worker);
        escrow.reject(id, t, worker, 0);
        uint256 endsAt = block.timestamp + REVIEW;
        vm.warp(endsAt + 1);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.ReviewWindowClosed.selector, id, endsAt));
        vm.prank(poster);
        escrow.reject(id, t, worker, 0);

        (uint256 id2, IBountyEscrow.Terms memory t2) = claimed(1 ether);
        vm.expectRevert(wrongStatus(id2, IBountyEscrow.Status.Assigned));
        vm.prank(poster);
        escrow.reject(id2, t2, worker, 0);
    }

    function test_dispute_onlyASubmission() public {
        (uint256 id, IBountyEscrow.Terms memory t) = claimed(1 ether);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.NotSubmitted.selector, id));
        vm.prank(worker);
        escrow.dispute(id, t, worker, keccak256("squatting"));
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.NotSubmitted.selector, id));
        vm.prank(poster);
        escrow.dispute(id, t, worker, keccak256("no progress"));
        vm.prank(worker);
        escrow.submit(id, t, worker, RESULT);
        vm.expectEmit(true, true, false, true, address(escrow));
        emit Disputed(id, worker, keccak256("pay me"));
        vm.prank(worker);
        escrow.dispute(id, t, worker, keccak256("pay me"));
        assertStatus(id, IBountyEscrow.Status.Disputed);
    }

    function test_dispute_notWithoutSubmissionEvenAfterTheDeadline() public {
        (uint256 id, IBountyEscrow.Terms memory t) = claimed(1 ether);
        vm.warp(t.deadline + 1);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.NotSubmitted.selector, id));
        vm.prank(poster);
        escrow.dispute(id, t, worker, 0);
        escrow.refund(id, t, worker); // the way out
        assertStatus(id, IBountyEscrow.Status.Refunded);
    }

    function test_dispute_byPosterDuringReview() public {
        (uint256 id, IBountyEscrow.Terms memory t) = submitted(1 ether);
        vm.prank(poster);
        escrow.dispute(id, t, worker, 0);
        assertStatus(id, IBountyEscrow.Status.Disputed);
    }

    function test_dispute_reverts() public {
        (uint256 id, IBountyEscrow.Terms memory t) = postETH(1 ether);
        vm.expectRevert(wrongStatus(id, IBountyEscrow.Status.Open));
        vm.prank(poster);
        escrow.dispute(id, t, address(0), 0);

        (uint256 id2, IBountyEscrow.Terms memory t2) = submitted(1 ether);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.NotParty.selector, id2, stranger));
        vm.prank(stranger);
        escrow.dispute(id2, t2, worker, 0);
        uint256 endsAt = block.timestamp + REVIEW;
        vm.warp(endsAt + 1);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.ReviewWindowClosed.selector, id2, endsAt));
        vm.prank(worker);
        escrow.dispute(id2, t2, worker, 0);
    }

    function test_resolve_splitsFunds() public {
        (uint256 id, IBountyEscrow.Terms memory t) = disputed(10 ether);
        uint256 share = 7 ether; // 70%
        uint256 fee = feeOf(share);
        uint256 workerBefore = worker.balance;
        uint256 posterBefore = poster.balance;
        vm.expectEmit(true, false, false, true, address(escrow));
        emit Resolved(id, 7000, share - fee, 3 ether, fee);
        vm.prank(arbiter);
        escrow.resolve(id, t, worker, 7000, 0);
        assertStatus(id, IBountyEscrow.Status.Resolved);
        vm.assertEq(worker.balance - workerBefore, share - fee, "worker");
        vm.assertEq(poster.balance - posterBefore, 3 ether, "poster");
        vm.assertEq(escrow.feesOwed(address(0)), fee, "fee");
    }

    function test_resolve_allToPosterChargesNoFee() public {
        (uint256 id, IBountyEscrow.Terms memory t) = disputed(10 ether);
        uint256 workerBefore = worker.balance;
        uint256 posterBefore = poster.balance;
        vm.prank(arbiter);
        escrow.resolve(id, t, worker, 0, 0);
        vm.assertEq(poster.balance - posterBefore, 10 ether, "poster gets everything");
        vm.assertEq(worker.balance, workerBefore, "worker nothing");
        vm.assertEq(escrow.feesOwed(address(0)), 0, "no fee");
    }

    function test_resolve_reverts() public {
        (uint256 id, IBountyEscrow.Terms memory t) = disputed(1 ether);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.NotArbiter.selector, id, poster));
        vm.prank(poster);
        escrow.resolve(id, t, worker, 5000, 0);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.InvalidSplit.selector, uint16(10_001)));
        vm.prank(arbiter);
        escrow.resolve(id, t, worker, 10_001, 0);

        (uint256 id2, IBountyEscrow.Terms memory t2) = submitted(1 ether);
        vm.expectRevert(wrongStatus(id2, IBountyEscrow.Status.Submitted));
        vm.prank(arbiter);
        escrow.resolve(id2, t2, worker, 5000, 0);
    }

    function test_resolveExpired_splitsEvenlyAfterTimeout() public {
        (uint256 id, IBountyEscrow.Terms memory t) = disputed(2 ether);
        uint256 endsAt = block.timestamp + escrow.ARBITER_TIMEOUT();
        vm.warp(endsAt);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.ArbiterTimeNotUp.selector, id, endsAt));
        vm.prank(worker);
        escrow.resolveExpired(id, t, worker);
        vm.warp(endsAt + 1);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.NotParty.selector, id, arbiter));
        vm.prank(arbiter);
        escrow.resolveExpired(id, t, worker);
        uint256 workerBefore = worker.balance;
        uint256 posterBefore = poster.balance;
        vm.prank(worker);
        escrow.resolveExpired(id, t, worker);
        assertStatus(id, IBountyEscrow.Status.Resolved);
        vm.assertEq(poster.balance - posterBefore, 1 ether, "poster half");
        vm.assertEq(worker.balance - workerBefore, 1 ether - feeOf(1 ether), "worker half less fee");
    }

    // --- refund ---

    function test_refund_afterDeadlineFromOpenOrAssigned() public {
        (uint256 open, IBountyEscrow.Terms memory t1) = postETH(1 ether);
        (uint256 assigned, IBountyEscrow.Terms memory t2) = claimed(2 ether);
        vm.warp(t2.deadline + 1);
        uint256 before = poster.balance;
        vm.expectEmit(true, false, false, true, address(escrow));
        emit Refunded(open, 1 ether);
        vm.prank(stranger); // anyone may trigger it: it only pays the poster
        escrow.refund(open, t1, address(0));
        vm.prank(poster);
        escrow.refund(assigned, t2, worker);
        assertStatus(open, IBountyEscrow.Status.Refunded);
        assertStatus(assigned, IBountyEscrow.Status.Refunded);
        vm.assertEq(poster.balance - before, 3 ether, "poster refunded both");
    }

    function test_refund_reverts() public {
        (uint256 id, IBountyEscrow.Terms memory t) = postETH(1 ether);
        vm.warp(t.deadline);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.DeadlineNotPassed.selector, id, t.deadline));
        escrow.refund(id, t, address(0));

        (uint256 id2, IBountyEscrow.Terms memory t2) = submitted(1 ether);
        vm.warp(t2.deadline + 1);
        vm.expectRevert(wrongStatus(id2, IBountyEscrow.Status.Submitted));
        escrow.refund(id2, t2, worker);
    }

    // --- withdraw ---

    function test_pay_creditsRefusedETHAndWithdrawPaysItOnce() public {
        RejectingReceiver rejecting = new RejectingReceiver(); // funded by exec's msg.value
        IBountyEscrow.Terms memory t = termsOf(address(rejecting), address(0), 1 ether, 0);
        rejecting.exec{value: 1 ether}(
            address(escrow),
            1 ether,
            abi.encodeCall(escrow.post, (address(0), 1 ether, arbiter, t.deadline, REVIEW, 0, SPEC, SALT))
        );
        vm.expectEmit(true, true, false, true, address(escrow));
        emit Credited(address(rejecting), address(0), 1 ether);
        uint256 id = escrow.bountyId(address(rejecting), SALT);
        rejecting.exec(address(escrow), 0, abi.encodeCall(escrow.cancel, (id, t)));
        assertStatus(id, IBountyEscrow.Status.Cancelled);
        vm.assertEq(escrow.owed(address(rejecting), address(0)), 1 ether, "refused refund credited");

        vm.expectRevert(
            abi.encodeWithSelector(
                IBountyEscrow.TransferFailed.selector, address(0), address(rejecting), uint256(1 ether)
            )
        );
        rejecting.exec(address(escrow), 0, abi.encodeCall(escrow.withdraw, (address(0))));
        vm.assertEq(escrow.owed(address(rejecting), address(0)), 1 ether, "credit kept for a later try");

        rejecting.setRefusing(false);
        vm.expectEmit(true, true, false, true, address(escrow));
        emit Withdrawn(address(rejecting), address(0), 1 ether);
        rejecting.exec(address(escrow), 0, abi.encodeCall(escrow.withdraw, (address(0))));
        vm.assertEq(address(rejecting).balance, 1 ether, "paid");
        vm.expectRevert(
            abi.encodeWithSelector(IBountyEscrow.NothingToWithdraw.selector, address(rejecting), address(0))
        );
        rejecting.exec(address(escrow), 0, abi.encodeCall(escrow.withdraw, (address(0))));
    }

    function test_pay_creditsARecipientThatBurnsGas() public {
        GasGuzzler guzzler = new GasGuzzler();
        (uint256 id, IBountyEscrow.Terms memory t) = postETH(1 ether);
        vm.prank(poster);
        escrow.assign(id, t, address(guzzler));
        guzzler.exec(address(escrow), 0, abi.encodeCall(escrow.submit, (id, t, address(guzzler), RESULT)));
        vm.prank(poster);
        escrow.accept(id, t, address(guzzler)); // the worker cannot make this fail
        assertStatus(id, IBountyEscrow.Status.Accepted);
        vm.assertEq(escrow.owed(address(guzzler), address(0)), 1 ether - feeOf(1 ether), "credited instead");
        guzzler.exec(address(escrow), 0, abi.encodeCall(escrow.withdraw, (address(0))));
        vm.assertEq(address(guzzler).balance, 1 ether - feeOf(1 ether), "withdrawn with all the gas it wants");
    }

    function test_pay_creditsRefusedTokens() public {
        FalseToken ft = new FalseToken();
        ft.setFailing(false);
        ft.mint(poster, 10 ether);
        vm.prank(poster);
        ft.approve(address(escrow), type(uint256).max);
        IBountyEscrow.Terms memory t = termsOf(poster, address(ft), 10 ether, 0);
        vm.prank(poster);
        uint256 id = escrow.post(address(ft), 10 ether, arbiter, t.deadline, REVIEW, 0, SPEC, nextSalt());
        ft.setFailing(true); // e.g. the poster got blocklisted by the token
        vm.prank(poster);
        escrow.cancel(id, t);
        vm.assertEq(escrow.owed(poster, address(ft)), 10 ether, "credited");
        vm.expectRevert(
            abi.encodeWithSelector(IBountyEscrow.TransferFailed.selector, address(ft), poster, uint256(10 ether))
        );
        vm.prank(poster);
        escrow.withdraw(address(ft));
        ft.setFailing(false);
        vm.prank(poster);
        escrow.withdraw(address(ft));
        vm.assertEq(ft.balanceOf(poster), 10 ether, "tokens back");
    }

    function test_withdrawFees_leavesOneUnit() public {
        (uint256 id, IBountyEscrow.Terms memory t) = submitted(10 ether);
        vm.prank(poster);
        escrow.accept(id, t, worker);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.NotTreasury.selector, stranger));
        vm.prank(stranger);
        escrow.withdrawFees(address(0));
        vm.expectEmit(true, true, false, true, address(escrow));
        emit FeesWithdrawn(treasury, address(0), feeOf(10 ether) - 1);
        vm.prank(treasury);
        vm.assertEq(escrow.withdrawFees(address(0)), feeOf(10 ether) - 1, "amount");
        vm.assertEq(treasury.balance, feeOf(10 ether) - 1, "treasury paid");
        vm.assertEq(escrow.feesOwed(address(0)), 1, "one unit kept");
        vm.assertEq(address(escrow).balance, 1, "backed by one wei");
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.NothingToWithdraw.selector, treasury, address(0)));
        vm.prank(treasury);
        escrow.withdrawFees(address(0));
    }

    // --- views ---

    function test_bountyOf_revertsForUnknownId() public {
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.UnknownBounty.selector, uint256(1)));
        escrow.bountyOf(1);
    }

    function test_load_refusesAnotherWorker() public {
        (uint256 id, IBountyEscrow.Terms memory t) = submitted(1 ether);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.TermsMismatch.selector, id));
        vm.prank(poster);
        escrow.accept(id, t, stranger);
    }

    // --- terminal states stay terminal ---

    function test_terminalStates_refuseEveryTransition() public {
        IBountyEscrow.Status[5] memory terminals = [
            IBountyEscrow.Status.Accepted,
            IBountyEscrow.Status.Released,
            IBountyEscrow.Status.Resolved,
            IBountyEscrow.Status.Refunded,
            IBountyEscrow.Status.Cancelled
        ];
        for (uint256 i = 0; i < terminals.length; i++) {
            (uint256 id, IBountyEscrow.Terms memory t, address w) = _reach(terminals[i]);
            assertStatus(id, terminals[i]);
            _expectAllRefused(id, t, w, terminals[i]);
        }
    }

    function _reach(IBountyEscrow.Status target)
        internal
        returns (uint256 id, IBountyEscrow.Terms memory t, address w)
    {
        w = worker;
        if (target == IBountyEscrow.Status.Cancelled) {
            (id, t) = postETH(1 ether);
            w = address(0);
            vm.prank(poster);
            escrow.cancel(id, t);
        } else if (target == IBountyEscrow.Status.Refunded) {
            (id, t) = postETH(1 ether);
            w = address(0);
            vm.warp(t.deadline + 1);
            escrow.refund(id, t, address(0));
        } else if (target == IBountyEscrow.Status.Accepted) {
            (id, t) = submitted(1 ether);
            vm.prank(poster);
            escrow.accept(id, t, worker);
        } else if (target == IBountyEscrow.Status.Released) {
            (id, t) = submitted(1 ether);
            vm.warp(block.timestamp + REVIEW + 1);
            vm.prank(worker);
            escrow.release(id, t, worker);
        } else {
            (id, t) = disputed(1 ether);
            vm.prank(arbiter);
            escrow.resolve(id, t, worker, 5000, 0);
        }
    }

    function _expectAllRefused(uint256 id, IBountyEscrow.Terms memory t, address w, IBountyEscrow.Status s) internal {
        bytes memory err = wrongStatus(id, s);
        vm.prank(poster);
        vm.expectRevert(err);
        escrow.cancel(id, t);
        vm.prank(worker);
        vm.expectRevert(err);
        escrow.claim(id, t, AGENT);
        vm.prank(poster);
        vm.expectRevert(err);
        escrow.assign(id, t, worker);
        vm.prank(poster);
        vm.expectRevert(err);
        escrow.accept(id, t, w);
        vm.prank(poster);
        vm.expectRevert(err);
        escrow.reject(id, t, w, 0);
        vm.prank(poster);
        vm.expectRevert(err);
        escrow.dispute(id, t, w, 0);
        vm.prank(arbiter);
        vm.expectRevert(err);
        escrow.resolve(id, t, w, 5000, 0);
        vm.expectRevert(err);
        escrow.refund(id, t, w);
        vm.prank(poster);
        vm.expectRevert(err);
        escrow.resolveExpired(id, t, w);
        if (w != address(0)) {
            vm.prank(w);
            vm.expectRevert(err);
            escrow.submit(id, t, w, RESULT);
            vm.warp(block.timestamp + 365 days);
            vm.prank(w);
            vm.expectRevert(err);
            escrow.release(id, t, w);
        }
    }
}

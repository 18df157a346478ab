// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {HookFixture} from "./lib/HookFixture.sol";
import {IERC8183} from "../src/IERC8183.sol";
import {ISuretyHook} from "../src/ISuretyHook.sol";
import {FreezableToken, FeeOnTransferToken} from "./mocks/Tokens.sol";

interface VmStore {
    function store(address target, bytes32 slot, bytes32 value) external;
}

/// @notice SuretyHook against the client's token: a token that freezes, or blocklists the
/// client, makes every payout and refund revert; the workers' stake locks still end, unslashed,
/// CLOSE_GRACE after the job's expiry, whatever the core's status.
contract SuretyHookTokenTest is HookFixture {
    FreezableToken internal frz;

    function setUp() public override {
        super.setUp();
        vm.prank(client);
        frz = new FreezableToken(); // the client is its admin: the attack
        frz.mint(client, 10 * BUDGET);
        vm.prank(client);
        frz.approve(address(core), type(uint256).max);
    }

    /// @dev A frz-paid job with `p`, funded by the client.
    function frzJob(ISuretyHook.Plan memory p) internal returns (uint256 id) {
        vm.startPrank(client);
        id = core.createJob(address(pool), address(hook), block.timestamp + DURATION, "job", address(hook), 0);
        core.setBudget(id, address(frz), BUDGET, abi.encode(p));
        core.fund(id, BUDGET, "");
        vm.stopPrank();
    }

    function freeStake(address w) internal view returns (uint256) {
        return registry.freeStakeOf(agentOf(w), w);
    }

    function test_close_endsLocksAfterExpiryPlusGraceWhenTheTokenIsFrozen() public {
        uint256 id = frzJob(plan(1, 1, 5 ether));
        joinAs(id, worker);
        submitAs(id, worker);
        vm.prank(client);
        frz.freeze(true);
        uint256 expiredAt = block.timestamp + DURATION;

        // Every payout and the refund revert; close waits for the grace.
        vm.warp(expiredAt + hook.CLOSE_GRACE());
        vm.expectRevert();
        hook.release(id);
        vm.expectRevert();
        core.claimRefund(id);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.CoreStatus.selector, id, uint8(2)));
        hook.close(id);
        vm.assertEq(freeStake(worker), 5 ether, "locked during the grace");

        vm.warp(expiredAt + hook.CLOSE_GRACE() + 1);
        vm.prank(stranger);
        hook.close(id);
        assertPhase(id, ISuretyHook.Phase.Settled);
        vm.assertEq(freeStake(worker), 10 ether, "the lock ended, unslashed");
        vm.startPrank(worker);
        registry.requestUnbond(agentOf(worker), 10 ether); // free to leave
        vm.stopPrank();

        // The budget stays in the core, refunded to the client once the token moves again;
        // the hook never completes the job.
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.WrongPhase.selector, id, ISuretyHook.Phase.Settled));
        hook.release(id);
        vm.prank(client);
        frz.freeze(false);
        core.claimRefund(id);
        vm.assertEq(frz.balanceOf(client), 10 * BUDGET, "refunded");
        vm.assertEq(uint256(coreStatus(id)), uint256(IERC8183.JobStatus.Expired), "expired");
    }

    function test_close_endsLocksWhenTheTokenBlocksTheClient() public {
        // A competition: two staked entrants, neither submitted; the issuer blocks the client,
        // so cancel and claimRefund (refunds to the client) revert.
        uint256 id = frzJob(plan(2, 1, 2 ether));
        joinAs(id, worker);
        joinAs(id, worker2);
        vm.prank(client);
        frz.block_(client, true);
        uint256 expiredAt = block.timestamp + DURATION;
        vm.warp(expiredAt);
        vm.expectRevert();
        core.claimRefund(id);
        vm.warp(expiredAt + hook.CLOSE_GRACE() + 1);
        hook.close(id);
        vm.assertEq(freeStake(worker), 10 ether, "worker unlocked");
        vm.assertEq(freeStake(worker2), 10 ether, "worker2 unlocked");
    }

    function test_close_endsADisputesLocksAfterTheGraceUnslashed() public {
        uint256 id = frzJob(plan(1, 1, 5 ether));
        joinAs(id, worker);
        submitAs(id, worker);
        vm.prank(client);
        hook.reject(id, 0);
        vm.prank(client);
        frz.freeze(true);
        // The arbiter's ruling cannot pay out either.
        vm.expectRevert();
        vm.prank(arbiter);
        hook.resolve(id, new address[](0), new uint16[](0), 5 ether);
        vm.warp(block.timestamp + DURATION + hook.CLOSE_GRACE() + 1);
        hook.close(id);
        vm.assertEq(freeStake(worker), 10 ether, "no slash by a frozen token");
    }

    function test_close_beforeTheGraceStillNeedsTheCoreExpired() public {
        uint256 id = frzJob(plan(1, 1, 5 ether));
        joinAs(id, worker);
        vm.warp(block.timestamp + DURATION);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.CoreStatus.selector, id, uint8(1)));
        hook.close(id);
        core.claimRefund(id); // the token works: the usual path
        hook.close(id);
        vm.assertEq(freeStake(worker), 10 ether, "unlocked");
    }

    function test_close_cannotSettleAPlannedJob() public {
        // A job planned but not funded has no expiry in the hook: the grace never applies, so
        // nobody can close it under the client and stop its funding.
        uint256 id = planned(plan(1, 1, STAKE));
        vm.warp(block.timestamp + 1 days);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.CoreStatus.selector, id, uint8(0)));
        hook.close(id);
        vm.prank(client);
        core.fund(id, BUDGET, "");
        assertPhase(id, ISuretyHook.Phase.Open);
    }

    // --- a fee-on-transfer token and an evaluator fee ---

    function fotJob(FeeOnTransferToken fot) internal returns (uint256 id) {
        vm.startPrank(client);
        id = core.createJob(address(pool), address(hook), block.timestamp + DURATION, "b", address(hook), 0);
        core.setBudget(id, address(fot), BUDGET, abi.encode(plan(1, 1, 0)));
        core.fund(id, BUDGET, "");
        vm.stopPrank();
        submitAs(id, worker);
    }

    function fotSetup() internal returns (FeeOnTransferToken fot) {
        vm.prank(owner);
        core.setEvaluatorFee(100); // 1%, in force when the job is created
        fot = new FeeOnTransferToken(100); // 1% burnt a transfer
        fot.mint(client, 10 * BUDGET);
        vm.prank(client);
        fot.approve(address(core), type(uint256).max);
    }

    /// The hook forwards the evaluator fee to the pool, which gets 1% less: the arbiter is paid
    /// what arrived, never more, so no credit goes unbacked.
    function test_evaluatorFee_feeOnTransferPaysTheArbiterWhatArrived() public {
        FeeOnTransferToken fot = fotSetup();
        uint256 id = fotJob(fot);
        vm.prank(client);
        hook.approve(id);
        vm.assertEq(pool.owed(arbiter, address(fot)), 0, "pushed, not credited");
        vm.assertEq(fot.balanceOf(address(pool)), 0, "the pool holds nothing");
        vm.assertEq(pool.totalOwed(address(fot)), 0, "owes nothing");
        vm.assertGt(fot.balanceOf(arbiter), 0, "the arbiter was paid");
    }

    /// Another recipient's honest credit in the same token is not touched by a job's evaluator fee.
    function test_evaluatorFee_feeOnTransferNeverSpendsOthersCredits() public {
        FeeOnTransferToken fot = fotSetup();
        address victim = makeAddr("victim");
        fot.mint(address(pool), 100 ether); // backs the credit seeded below
        VmStore(address(vm))
            .store(
                address(pool),
                keccak256(abi.encode(address(fot), keccak256(abi.encode(victim, uint256(0))))),
                bytes32(uint256(100 ether))
            );
        VmStore(address(vm))
            .store(address(pool), keccak256(abi.encode(address(fot), uint256(1))), bytes32(uint256(100 ether)));
        vm.assertEq(pool.owed(victim, address(fot)), 100 ether, "seeded credit");
        uint256 id = fotJob(fot);
        vm.prank(client);
        hook.approve(id);
        vm.assertEq(fot.balanceOf(address(pool)), pool.totalOwed(address(fot)), "the pool holds exactly its credits");
        vm.prank(victim);
        pool.withdraw(address(fot));
    }
}

// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {JobFixture} from "./lib/JobFixtures.sol";
import {JobEscrow} from "../src/JobEscrow.sol";
import {IERC8183} from "../src/IERC8183.sol";
import {ReentrancyGuard} from "../src/ReentrancyGuard.sol";
import {ReentrantHook} from "./mocks/Hooks.sol";
import {MockERC20, FeeOnTransferToken, CallbackToken} from "./mocks/Tokens.sol";

/// @notice The pitfalls issue 29 names, and where JobEscrow parts from the reference (docs/
/// ERC8183.md, "Where we differ from the reference and the ERC text"): each test here fails
/// on the reference's behaviour.
contract JobEscrowAttackTest is JobFixture {
    // --- (a) an expired Open job with a budget set but never funded ---

    /// The reference's claimRefund (c67e160) accepts an Open job and transfers `budget` to
    /// its client, funded or not: out of the other jobs' escrow.
    function test_claimRefund_unfundedOpenJobPaysNothing() public {
        uint256 honest = funded(BUDGET);
        address thief = makeAddr("thief");
        vm.prank(thief);
        uint256 ghost = escrow.createJob(provider, evaluator, block.timestamp + 6 minutes, "", address(0), 0);
        vm.prank(thief);
        escrow.setBudget(ghost, address(token), BUDGET, "");
        vm.warp(block.timestamp + 6 minutes);
        escrow.claimRefund(ghost);
        assertStatus(ghost, IERC8183.JobStatus.Expired, "the ghost job expired");
        vm.assertEq(token.balanceOf(thief), 0, "its client got nothing");
        vm.assertEq(token.balanceOf(address(escrow)), BUDGET, "the honest job's escrow is whole");
        vm.prank(provider);
        escrow.submit(honest, DELIVERABLE, "");
        vm.prank(evaluator);
        escrow.complete(honest, REASON, "");
        vm.assertEq(token.balanceOf(provider), BUDGET, "and pays its provider in full");
    }

    /// Rejecting an Open job refunds nothing either (the reference agrees; the pitfall stays tested).
    function test_reject_unfundedOpenJobPaysNothing() public {
        funded(BUDGET);
        uint256 id = open();
        budget(id, BUDGET);
        uint256 before = token.balanceOf(client);
        vm.prank(client);
        escrow.reject(id, REASON, "");
        vm.assertEq(token.balanceOf(client), before, "nothing refunded");
        vm.assertEq(token.balanceOf(address(escrow)), BUDGET, "the funded job's escrow is whole");
    }

    // --- (b) the token and the budget cannot change between the client's read and fund ---

    /// The client set 20 USDC and has also approved the escrow for WBTC (another job of its).
    /// On the reference, the provider front-runs fund with setBudget(WBTC, 20e6): the
    /// expectedBudget still matches and fund pulls 20e6 of WBTC. Here only the client may
    /// switch a token once set.
    function test_setBudget_providerCannotSwitchTheToken() public {
        MockERC20 wbtc = new MockERC20("Wrapped BTC", "WBTC");
        wbtc.mint(client, 1e8);
        vm.prank(client);
        wbtc.approve(address(escrow), type(uint256).max);
        uint256 id = open();
        budget(id, BUDGET);
        vm.expectRevert(abi.encodeWithSelector(JobEscrow.PaymentTokenLocked.selector, address(token)));
        vm.prank(provider);
        escrow.setBudget(id, address(wbtc), BUDGET, "");
        vm.prank(client);
        escrow.fund(id, BUDGET, "");
        vm.assertEq(token.balanceOf(address(escrow)), BUDGET, "funded in the token the client chose");
        vm.assertEq(wbtc.balanceOf(client), 1e8, "no WBTC moved");
    }

    /// The provider named the token first; it may still not switch it later (the client saw it).
    function test_setBudget_providerCannotSwitchItsOwnToken() public {
        uint256 id = open();
        vm.prank(provider);
        escrow.setBudget(id, address(token), BUDGET, "");
        vm.expectRevert(abi.encodeWithSelector(JobEscrow.PaymentTokenLocked.selector, address(token)));
        vm.prank(provider);
        escrow.setBudget(id, makeAddr("another token"), BUDGET, "");
    }

    /// A front-run of the amount is what fund's expectedBudget stops (as in the reference).
    function test_fund_expectedBudgetStopsAFrontRunAmount() public {
        uint256 id = open();
        budget(id, BUDGET);
        vm.prank(provider);
        escrow.setBudget(id, address(token), 10 * BUDGET, "");
        vm.expectRevert(IERC8183.BudgetMismatch.selector);
        vm.prank(client);
        escrow.fund(id, BUDGET, "");
    }

    // --- (c) fee-on-transfer tokens: the job holds what arrived ---

    /// The reference books `budget` whatever arrived, then pays `budget` out: the shortfall
    /// comes out of the other jobs' escrow (or the last job cannot be paid at all).
    function test_fund_feeOnTransferBooksWhatArrived() public {
        FeeOnTransferToken fot = feeToken(100); // 1%
        uint256 first = fotJob(fot, 1000e6);
        uint256 second = fotJob(fot, 1000e6);
        vm.assertEq(escrow.getJob(first).budget, 990e6, "the budget is what arrived");
        vm.assertEq(fot.balanceOf(address(escrow)), 1980e6, "both jobs' arrivals");
        vm.prank(provider);
        escrow.submit(first, DELIVERABLE, "");
        vm.prank(evaluator);
        escrow.complete(first, REASON, "");
        vm.prank(evaluator);
        escrow.reject(second, REASON, "");
        vm.assertEq(fot.balanceOf(address(escrow)), 0, "each job paid out exactly what it held");
    }

    function test_claimRefund_feeOnTransferRefundsWhatArrived() public {
        FeeOnTransferToken fot = feeToken(250);
        uint256 first = fotJob(fot, 400e6);
        uint256 second = fotJob(fot, 400e6);
        vm.warp(escrow.getJob(first).expiredAt);
        vm.expectEmit(true, true, true, true, address(escrow));
        emit IERC8183.Refunded(first, client, 390e6);
        escrow.claimRefund(first);
        vm.assertEq(fot.balanceOf(address(escrow)), 390e6, "the second job's arrival is untouched");
        escrow.claimRefund(second);
        vm.assertEq(fot.balanceOf(address(escrow)), 0, "and refundable in full");
    }

    function test_fund_emitsWhatArrived() public {
        FeeOnTransferToken fot = feeToken(100);
        uint256 id = open();
        vm.prank(client);
        escrow.setBudget(id, address(fot), 100e6, "");
        vm.expectEmit(true, true, true, true, address(escrow));
        emit IERC8183.JobFunded(id, client, 99e6);
        vm.prank(client);
        escrow.fund(id, 100e6, "");
    }

    function test_fund_revertsWhenNothingArrives() public {
        FeeOnTransferToken fot = feeToken(10_000); // takes everything
        uint256 id = open();
        vm.prank(client);
        escrow.setBudget(id, address(fot), 100e6, "");
        vm.expectRevert(IERC8183.ZeroBudget.selector);
        vm.prank(client);
        escrow.fund(id, 100e6, "");
    }

    // --- (d) hooks and tokens cannot re-enter to move a job twice ---

    /// The evaluator is a contract whose hook, after complete paid the provider, tries every
    /// entry point again (reject to refund the client as well, claimRefund, complete twice...).
    function test_hook_cannotReenterDuringComplete() public {
        for (uint256 i = 0; i < 8; i++) {
            ReentrantHook hook = new ReentrantHook();
            vm.prank(owner);
            escrow.setHookWhitelist(address(hook), true);
            vm.prank(client);
            uint256 id = escrow.createJob(provider, address(hook), expiry(), "", address(hook), 0);
            budget(id, BUDGET);
            vm.prank(client);
            escrow.fund(id, BUDGET, "");
            vm.prank(provider);
            escrow.submit(id, DELIVERABLE, "");
            hook.arm(address(escrow), reentryCalls(id)[i], IERC8183.complete.selector, false);
            uint256 clientBefore = token.balanceOf(client);
            uint256 providerBefore = token.balanceOf(provider);
            hook.exec(address(escrow), abi.encodeCall(IERC8183.complete, (id, REASON, "")));
            vm.assertEq(hook.attempts(), 1, "the hook tried");
            vm.assertFalse(hook.reentryOk(), "and failed");
            vm.assertEq(
                keccak256(hook.reentryResult()),
                keccak256(abi.encodeWithSelector(ReentrancyGuard.Reentrancy.selector)),
                "on the re-entry lock"
            );
            vm.assertEq(token.balanceOf(provider) - providerBefore, BUDGET, "paid once");
            vm.assertEq(token.balanceOf(client), clientBefore, "no refund on top");
            assertStatus(id, IERC8183.JobStatus.Completed, "completed");
        }
    }

    /// A before hook re-entering fund cannot fund the job twice.
    function test_hook_cannotReenterFund() public {
        ReentrantHook hook = new ReentrantHook();
        vm.prank(owner);
        escrow.setHookWhitelist(address(hook), true);
        uint256 id = openWithHook(address(hook));
        budget(id, BUDGET);
        hook.arm(address(escrow), abi.encodeCall(IERC8183.fund, (id, BUDGET, "")), IERC8183.fund.selector, true);
        vm.prank(client);
        escrow.fund(id, BUDGET, "");
        vm.assertFalse(hook.reentryOk(), "re-entry refused");
        vm.assertEq(token.balanceOf(address(escrow)), BUDGET, "funded once");
    }

    /// A token calling back into the escrow during fund's transferFrom (as ERC-777 hooks do)
    /// cannot claim another job's refund meanwhile.
    function test_token_cannotReenterDuringFund() public {
        CallbackToken cb = new CallbackToken();
        cb.mint(client, 2 * BUDGET);
        vm.prank(client);
        cb.approve(address(escrow), type(uint256).max);
        uint256 expiring = open();
        vm.prank(client);
        escrow.setBudget(expiring, address(cb), BUDGET, "");
        vm.prank(client);
        escrow.fund(expiring, BUDGET, "");
        vm.warp(escrow.getJob(expiring).expiredAt);
        uint256 id = open();
        vm.prank(client);
        escrow.setBudget(id, address(cb), BUDGET, "");
        cb.arm(address(escrow), abi.encodeCall(IERC8183.claimRefund, (expiring)));
        vm.prank(client);
        escrow.fund(id, BUDGET, "");
        vm.assertFalse(cb.callbackOk(), "re-entry refused");
        assertStatus(expiring, IERC8183.JobStatus.Funded, "the other job did not move");
    }

    // --- fees on any budget ---

    /// The reference computes a fee as budget × feeBP / 10,000, which overflows (a panic) for a
    /// budget above 2^256 / 10,000: with any fee set, such a job can never be completed.
    function test_complete_paysFeesOnTheLargestBudget() public {
        vm.startPrank(owner);
        escrow.setPlatformFee(250, treasury);
        escrow.setEvaluatorFee(100);
        vm.stopPrank();
        uint256 amount = type(uint256).max - token.totalSupply();
        token.mint(client, amount);
        uint256 id = submitted(amount);
        vm.prank(evaluator);
        escrow.complete(id, REASON, "");
        uint256 platformFee = amount / 10_000 * 250 + amount % 10_000 * 250 / 10_000;
        uint256 evaluatorFee = amount / 10_000 * 100 + amount % 10_000 * 100 / 10_000;
        vm.assertEq(token.balanceOf(treasury), platformFee, "2.5%, rounded down");
        vm.assertEq(token.balanceOf(evaluator), evaluatorFee, "1%, rounded down");
        vm.assertEq(token.balanceOf(provider), amount - platformFee - evaluatorFee, "the rest");
    }

    // --- helpers ---

    function feeToken(uint256 bps) internal returns (FeeOnTransferToken fot) {
        fot = new FeeOnTransferToken(bps);
        fot.mint(client, 1_000_000e6);
        vm.prank(client);
        fot.approve(address(escrow), type(uint256).max);
    }

    function fotJob(FeeOnTransferToken fot, uint256 amount) internal returns (uint256 id) {
        id = open();
        vm.prank(client);
        escrow.setBudget(id, address(fot), amount, "");
        vm.prank(client);
        escrow.fund(id, amount, "");
    }

    /// Every entry point of the escrow, for job `id`.
    function reentryCalls(uint256 id) internal view returns (bytes[8] memory calls) {
        calls[0] = abi.encodeCall(IERC8183.complete, (id, REASON, ""));
        calls[1] = abi.encodeCall(IERC8183.reject, (id, REASON, ""));
        calls[2] = abi.encodeCall(IERC8183.claimRefund, (id));
        calls[3] = abi.encodeCall(IERC8183.fund, (id, BUDGET, ""));
        calls[4] = abi.encodeCall(IERC8183.submit, (id, DELIVERABLE, ""));
        calls[5] = abi.encodeCall(IERC8183.setBudget, (id, address(token), BUDGET, ""));
        calls[6] = abi.encodeCall(IERC8183.setProvider, (id, provider, 0));
        calls[7] = abi.encodeCall(IERC8183.createJob, (provider, evaluator, expiry(), "", address(0), 0));
    }
}
